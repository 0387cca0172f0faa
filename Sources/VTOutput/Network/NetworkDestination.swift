import Foundation
import VTCore

/// A media server (or a receiver) an output publishes to, as `-o` names it: `srt://`,
/// `rtsp://`, `rtmp://`, `rtmps://` or `udp://`. What each scheme carries, how its URL is
/// checked and what libavformat is given for it is decided here, once.
public struct NetworkDestination: Sendable, Equatable, CustomStringConvertible {
    public enum Scheme: String, CaseIterable, Sendable {
        /// MPEG-TS over SRT: caller by default, listener with `mode=listener`.
        case srt
        /// RTSP publishing (ANNOUNCE and RECORD), RTP interleaved in the TCP connection.
        case rtsp
        /// FLV over RTMP, and over RTMP in TLS.
        case rtmp, rtmps
        /// MPEG-TS in UDP datagrams, to one receiver or a multicast group.
        case udp

        /// libavformat's muxer for the scheme.
        var muxerName: String {
            switch self {
            case .srt, .udp: "mpegts"
            case .rtmp, .rtmps: "flv"
            case .rtsp: "rtsp"
            }
        }

        /// The stream's format as the summary names it: `ts`, `flv` or `rtp`.
        public var formatName: String {
            switch self {
            case .srt, .udp: "ts"
            case .rtmp, .rtmps: "flv"
            case .rtsp: "rtp"
            }
        }

        /// The container the stream is in, for messages.
        public var streamKind: String {
            switch self {
            case .srt, .udp: "MPEG-TS"
            case .rtmp, .rtmps: "FLV"
            case .rtsp: "RTP"
            }
        }

        /// Whether the stream can carry sound of `codec`: FLV carries AAC only; MPEG-TS and RTP
        /// carry AAC and Opus; none of them 16-bit little-endian PCM.
        public func carries(_ codec: AudioCodec) -> Bool {
            switch (self, codec) {
            case (_, .aac): true
            case (.rtmp, .opus), (.rtmps, .opus): false
            case (_, .opus): true
            case (_, .pcm): false
            }
        }

        /// The schemes, for messages: "srt://, rtsp://, rtmp://, rtmps:// and udp://".
        public static var list: String {
            let all = allCases.map { "\($0.rawValue)://" }
            return all.dropLast().joined(separator: ", ") + " and " + all.last!
        }
    }

    /// The URL as given.
    public let url: String
    /// SRT with `mode=listener`: connecting waits, as long as it takes, for a receiver to call.
    public let waitsForCaller: Bool
    public let scheme: Scheme
    /// The URL libavformat opens: SRT's latencies in microseconds, UDP datagrams of 7 TS packets.
    let libavformatURL: String

    /// SRT's options that name a time in milliseconds, as SRT's own tools and media servers
    /// take them; libavformat wants microseconds.
    static let srtMilliseconds: Set<String> = ["latency", "rcvlatency", "peerlatency"]
    /// Query options whose values are secrets, masked in everything vtrecord prints.
    static let secretOptions: Set<String> = ["passphrase", "password", "pass", "pwd", "key", "token"]

    /// Whether `text` names a network destination (a scheme followed by `://`) rather than a
    /// file: it may still be one vtrecord cannot publish to.
    public static func looksLikeURL(_ text: String) -> Bool {
        text.firstMatch(of: /^[A-Za-z][A-Za-z0-9+.-]*:\/\//) != nil
    }

    /// Checks `text` as an output URL; the error says what is wrong and how to write it.
    public init(parsing text: String) throws(UsageError) {
        url = text
        let shown = Self.mask(text)
        guard let schemeEnd = text.range(of: "://") else {
            throw UsageError("-o \(shown) is not a URL: write it as scheme://host:port")
        }
        let name = text[..<schemeEnd.lowerBound].lowercased()
        guard let scheme = Scheme(rawValue: name) else {
            throw UsageError("-o \(shown): vtrecord cannot publish to \(name)://; outputs are files, '-', \(Scheme.list)")
        }
        self.scheme = scheme
        guard let parts = URLComponents(string: text) else {
            throw UsageError("-o \(shown) is not a well-formed URL: check for spaces and characters that need %-escaping")
        }
        guard let host = parts.host, !host.isEmpty else {
            throw UsageError("-o \(shown) names no host: write \(name)://host:port")
        }
        if parts.port == nil && (scheme == .srt || scheme == .udp) {
            throw UsageError("-o \(shown) names no port: \(name):// has no default, write \(name)://\(host):PORT")
        }
        if let port = parts.port, !(1...65_535).contains(port) {
            throw UsageError("-o \(shown): port \(port) is not 1 to 65535")
        }
        let path = parts.path.split(separator: "/")
        switch scheme {
        case .rtmp where path.count < 2, .rtmps where path.count < 2:
            throw UsageError("-o \(shown) names no stream: write \(name)://\(host)/APPLICATION/STREAM (nginx-rtmp: /live/NAME)")
        case .rtsp where path.isEmpty:
            throw UsageError("-o \(shown) names no path: write rtsp://\(host):PORT/NAME")
        default:
            break
        }
        var query = parts.queryItems ?? []
        if scheme == .srt {
            for index in query.indices where Self.srtMilliseconds.contains(query[index].name) {
                guard let value = query[index].value, let milliseconds = Int64(value), milliseconds >= 0 else {
                    throw UsageError("-o \(shown): \(query[index].name) is in milliseconds, a whole number such as 200")
                }
                query[index].value = String(milliseconds * 1000)
            }
            if let mode = query.first(where: { $0.name == "mode" })?.value,
               !["caller", "listener", "rendezvous"].contains(mode) {
                throw UsageError("-o \(shown): mode=\(mode) is not caller, listener or rendezvous")
            }
        }
        if scheme == .srt && !query.contains(where: { $0.name == "linger" }) {
            // Closed at once (SRT's live-mode default), a socket discards what the receiver has
            // not acknowledged yet, and a clean end sends the encoder's lookahead (40 pictures
            // at --speed medium) in one burst just before it: 1.6 s of every stream was lost.
            query.append(URLQueryItem(name: "linger", value: "1"))
        }
        if scheme == .udp && !query.contains(where: { $0.name == "pkt_size" }) {
            // Seven 188-byte TS packets a datagram, as every MPEG-TS-over-UDP receiver expects.
            query.append(URLQueryItem(name: "pkt_size", value: "1316"))
        }
        waitsForCaller = scheme == .srt && query.contains { $0.name == "mode" && $0.value == "listener" }
        var rewritten = parts
        if scheme == .srt || scheme == .udp { rewritten.queryItems = query.isEmpty ? nil : query }
        libavformatURL = rewritten.string ?? text
    }

    /// The URL with its secrets masked: a password in it, and the values of `passphrase` and
    /// the like.
    public var description: String { Self.mask(url) }

    static func mask(_ text: String) -> String {
        guard var parts = URLComponents(string: text) else { return text }
        var changed = false
        if parts.password != nil {
            parts.password = "***"
            changed = true
        }
        if let items = parts.queryItems {
            parts.queryItems = items.map { item in
                guard secretOptions.contains(item.name.lowercased()) else { return item }
                changed = true
                return URLQueryItem(name: item.name, value: "***")
            }
        }
        return changed ? (parts.string ?? text) : text
    }
}
