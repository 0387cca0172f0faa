import ArgumentParser
import Foundation
import VTCore
import VTLiveServer

/// `--http`: the built-in HTTP server (live view, status, metrics, events, recordings).
struct HTTPOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Serve a live view, status, metrics, events and the recordings over HTTP on this address: PORT or 127.0.0.1:PORT (this machine only), :PORT (every interface), ADDR:PORT. Port 0 picks a free one, said on stderr. An address beyond this machine needs --http-auth or --http-no-auth.", valueName: "addr:port"))
    var http: String?

    @Option(name: .long, help: ArgumentHelp("With --http: every request needs a user and password of this file, one user:hash line each, hashed as htpasswd -nB USER or openssl passwd -6 make them. Put TLS in front with a reverse proxy.", valueName: "file"))
    var httpAuth: String?

    @Flag(name: .long, help: "With --http on an address beyond this machine: serve without a password (a trusted network, or a proxy that checks them).")
    var httpNoAuth = false

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --http: pictures a second of /stream.mjpeg, made with libturbojpeg while someone watches it (default 10). An MJPEG camera's own JPEGs are served as they come instead, at its rate.", valueName: "rate"))
    var httpMjpegFps: Double?

    @Option(name: .long, help: ArgumentHelp("With --http: the size of the JPEGs made for /stream.mjpeg (default the picture's own).", valueName: "WxH"))
    var httpMjpegSize: FrameSize?

    @Option(name: .long, help: ArgumentHelp("With --http: give the live view (/live.mp4, /live.m3u8) an encode of its own at this size, low-latency (x264 superfast, zerolatency, 1 s keyframes), as IP cameras serve a sub-stream: the recording's settings then no longer decide how late the live picture is. Costs a second encode.", valueName: "WxH"))
    var liveSize: FrameSize?

    @Option(name: .long, parsing: .unconditional, help: ArgumentHelp("With --http: the live view's own encode at this bit rate (default 1M; the size is the picture's own unless --live-size is given).", valueName: "rate"))
    var liveBitrate: DecimalQuantity?

    /// Whether the live view has an encode of its own.
    var hasLiveEncode: Bool { liveSize != nil || liveBitrate != nil }

    /// Seconds between the JPEGs of /stream.mjpeg.
    var mjpegInterval: Double { 1 / (httpMjpegFps ?? 10) }

    /// The address, checked.
    var address: HTTPAddress? {
        get throws {
            guard let http else { return nil }
            guard let address = HTTPAddress(http) else {
                throw ValidationError("--http \(http): expected PORT, :PORT or ADDRESS:PORT (a port from 0 to 65535), such as 127.0.0.1:8080")
            }
            return address
        }
    }

    /// Not named validate(): swift-argument-parser would call that on its own.
    func validateHTTP() throws {
        guard let address = try address else {
            if let given = [httpAuth.map { _ in "--http-auth" }, httpNoAuth ? "--http-no-auth" : nil,
                            httpMjpegFps.map { _ in "--http-mjpeg-fps" },
                            httpMjpegSize.map { _ in "--http-mjpeg-size" }, liveSize.map { _ in "--live-size" },
                            liveBitrate.map { _ in "--live-bitrate" }].compactMap({ $0 }).first {
                throw ValidationError("\(given) applies to the HTTP server: add --http ADDRESS:PORT")
            }
            return
        }
        if let fps = httpMjpegFps, !(fps > 0 && fps <= 60) {
            throw ValidationError("--http-mjpeg-fps must be above 0 and at most 60")
        }
        if let size = httpMjpegSize, size.width < 16 || size.height < 16 || size.width % 2 != 0 || size.height % 2 != 0 {
            throw ValidationError("--http-mjpeg-size \(size): give even sizes of 16 and up, such as 640x360")
        }
        if let size = liveSize, size.width < 16 || size.height < 16 || size.width % 2 != 0 || size.height % 2 != 0 {
            throw ValidationError("--live-size \(size): give even sizes of 16 and up, such as 640x360")
        }
        if let rate = liveBitrate?.value, rate < 16_000 || rate > 100_000_000 {
            throw ValidationError("--live-bitrate must be from 16k to 100M bit/s")
        }
        if httpAuth != nil && httpNoAuth {
            throw ValidationError("--http-auth and --http-no-auth contradict each other: give one")
        }
        if !address.isLoopback && httpAuth == nil && !httpNoAuth {
            throw ValidationError("--http \(http!) can be reached from other machines: give --http-auth FILE (user:hash lines, htpasswd -nB USER makes one) or --http-no-auth, or listen on 127.0.0.1")
        }
    }
}
