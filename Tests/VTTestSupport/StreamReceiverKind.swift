import Foundation

extension StreamReceiver {
    /// The receivers a stream test can publish to, each a program vtrecord's authors did not
    /// write, listening on 127.0.0.1.
    public enum Kind: Sendable, Equatable {
        /// ffmpeg as an SRT listener (MPEG-TS). `latencyMilliseconds` becomes ffmpeg's
        /// `-latency`, which counts MICROseconds (ffmpeg divides by 1000 before it sets
        /// SRTO_LATENCY), so 500 ms is passed as 500000. A passphrase of 10 to 79 characters
        /// turns encryption on.
        case srt(latencyMilliseconds: Int? = nil, passphrase: String? = nil)
        /// ffmpeg's RTSP listener (`-rtsp_flags listen`) for an ANNOUNCE + RECORD publisher.
        case rtsp
        /// ffmpeg reading MPEG-TS datagrams.
        case udp
        /// nginx with its RTMP module, recording every publish to an FLV file of its own.
        case rtmp
    }
}

extension StreamReceiver.Kind {
    var name: String {
        switch self {
        case .srt: "SRT listener (ffmpeg)"
        case .rtsp: "RTSP listener (ffmpeg)"
        case .udp: "UDP receiver (ffmpeg)"
        case .rtmp: "RTMP server (nginx)"
        }
    }

    var overUDP: Bool {
        switch self {
        case .srt, .udp: true
        case .rtsp, .rtmp: false
        }
    }

    /// The stream name publishers use on the RTSP and RTMP receivers.
    static let streamName = "camera"

    func url(port: Int) -> String {
        switch self {
        case .srt: "srt://127.0.0.1:\(port)"
        case .rtsp: "rtsp://127.0.0.1:\(port)/\(Self.streamName)"
        case .udp: "udp://127.0.0.1:\(port)"
        case .rtmp: "rtmp://127.0.0.1:\(port)/live/\(Self.streamName)"
        }
    }

    /// How long `stop` waits for a receiver that ends with its connection (SRT, RTSP) to end
    /// on its own before it is told to. SRT hands a packet on only once it is `latency` old,
    /// so what the last packets carry comes out that much after they arrive.
    var settle: Duration {
        switch self {
        case .srt(let latency, _): .seconds(2) + .milliseconds(latency ?? 120)
        case .rtsp: .seconds(2)
        case .udp, .rtmp: .zero
        }
    }

    /// What the receiver of `generation` writes, inside `directory`: the bytes that arrived
    /// (SRT, UDP), the checksums of what it decoded (RTSP), or a directory of recordings (RTMP).
    func capture(in directory: URL, generation: Int) -> String {
        switch self {
        case .srt, .udp: directory.appendingPathComponent("received-\(generation).ts").path
        case .rtsp: directory.appendingPathComponent("received-\(generation).framemd5").path
        case .rtmp: directory.appendingPathComponent("recordings-\(generation)").path
        }
    }

    /// The receiver's command line. SRT and UDP receivers store the bytes as they come
    /// (`-f data` in and out, flushed per packet) and `stop` decodes them afterwards: decoded
    /// live, the frames the demuxer and decoder still held when ffmpeg was stopped were lost
    /// (5 of 90 over UDP), where a file read to its end gives them all, and a killed receiver
    /// leaves every byte it got. RTSP cannot be stored that way (copying it into Matroska fails
    /// on packets without timestamps), so that one decodes live to framemd5, flushed per
    /// frame; its trace log holds the SETUP requests, where the publisher's transport shows.
    func command(port: Int, capture: String, directory: URL, generation: Int) throws -> [String] {
        let quiet = ["ffmpeg", "-nostdin", "-hide_banner", "-nostats"]
        let storeBytes = ["-map", "0", "-c", "copy", "-flush_packets", "1", "-f", "data", capture]
        switch self {
        case let .srt(latency, passphrase):
            var options = ["-f", "data", "-mode", "listener"]
            if let latency { options += ["-latency", String(latency * 1000)] }
            if let passphrase { options += ["-passphrase", passphrase] }
            return quiet + options + ["-i", url(port: port)] + storeBytes
        case .udp:
            // localaddr keeps the socket on loopback (ffmpeg binds 0.0.0.0 otherwise); 4 MB
            // of socket buffer (the kernel's rmem_max here) and a FIFO that does not end the
            // read on overrun ride out a paused reader.
            let input = "udp://127.0.0.1:\(port)?localaddr=127.0.0.1&buffer_size=4194304&overrun_nonfatal=1"
            return quiet + ["-f", "data", "-i", input] + storeBytes
        case .rtsp:
            return quiet + ["-loglevel", "level+trace", "-rtsp_flags", "listen", "-i", url(port: port),
                            "-map", "0:v?", "-map", "0:a?", "-fps_mode", "passthrough",
                            "-flush_packets", "1", "-f", "framemd5", capture]
        case .rtmp:
            try FileManager.default.createDirectory(atPath: capture, withIntermediateDirectories: true)
            let configuration = directory.appendingPathComponent("nginx-\(generation).conf").path
            try NginxRTMP.configuration(port: port, recordings: capture, pidFile: directory.appendingPathComponent("nginx.pid").path)
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            return [NginxRTMP.program, "-p", directory.path, "-c", configuration, "-e", "stderr"]
        }
    }

    /// The parts the receiver of `generation` left: one for an ffmpeg receiver (it takes one
    /// connection and ends with it), one per recorded publish for nginx, or one empty part
    /// carrying nginx's log when it recorded nothing.
    func parts(capture: String, log: String, generation: Int) -> [ReceivedPart] {
        switch self {
        case .srt, .udp:
            guard let size = try? FileManager.default.attributesOfItem(atPath: capture)[.size] as? Int, size > 0 else {
                return [ReceivedPart(generation: generation, checksums: FrameChecksums(), standardError: log)]
            }
            return [decodedPart(capture, log: log, generation: generation)]
        case .rtsp:
            let checksums = FrameChecksums(parsing: (try? String(contentsOfFile: capture, encoding: .utf8)) ?? "")
            return [ReceivedPart(generation: generation, checksums: checksums,
                                 rtspTransport: Self.rtspTransport(in: log), standardError: Self.withoutTrace(log))]
        case .rtmp:
            let recordings = NginxRTMP.recordings(in: capture)
            let note = NginxRTMP.overwrittenRecordings(log: log, recordings: recordings.count)
            if recordings.isEmpty {
                return [ReceivedPart(generation: generation, checksums: FrameChecksums(), standardError: note + log)]
            }
            return recordings.map { decodedPart($0, log: note + log, generation: generation) }
        }
    }

    private func decodedPart(_ file: String, log: String, generation: Int) -> ReceivedPart {
        do {
            let (checksums, decoderLog) = try FrameChecksums.decoding(file)
            return ReceivedPart(generation: generation, checksums: checksums,
                                standardError: log + "\n--- decoding \((file as NSString).lastPathComponent):\n" + decoderLog)
        } catch {
            return ReceivedPart(generation: generation, checksums: FrameChecksums(),
                                standardError: log + "\nffmpeg could not be run to decode \(file): \(error)")
        }
    }

    /// The transport of the publisher's SETUP requests, as ffmpeg's trace log quotes them
    /// ("Parsing[58]: Transport: RTP/AVP/TCP;unicast;interleaved=0-1;mode=record"). ffmpeg's
    /// listener answers whatever the publisher asks: `-rtsp_transport tcp` on the listener
    /// still accepted UDP, so the publisher's choice is what a test has to check.
    static func rtspTransport(in log: String) -> RTSPTransport? {
        let requests = log.split(separator: "\n").filter { $0.contains("Parsing[") && $0.contains("Transport: RTP/") }
        guard !requests.isEmpty else { return nil }
        return requests.allSatisfy { $0.contains("RTP/AVP/TCP") } ? .tcp : .udp
    }

    /// A log written with `-loglevel level+trace` without its trace, debug and verbose lines;
    /// the RTSP requests and answers ffmpeg dumps whole stay, as they say what went wrong.
    static func withoutTrace(_ log: String) -> String {
        log.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !($0.contains("[trace]") || $0.contains("[debug]") || $0.contains("[verbose]")) }
            .joined(separator: "\n")
    }
}
