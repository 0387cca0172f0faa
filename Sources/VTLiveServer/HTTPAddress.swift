import Foundation

/// `--http ADDR:PORT`: where the server listens.
public struct HTTPAddress: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int

    /// `8080`, `:8080` (every interface), `127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`.
    /// A lone port listens on 127.0.0.1 only.
    public init?(_ text: String) {
        let text = text.trimmingCharacters(in: .whitespaces)
        var host = "127.0.0.1"
        var portText = text
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            host = String(text[text.index(after: text.startIndex) ..< close])
            portText = String(text[text.index(close, offsetBy: 2)...])
        } else if let colon = text.lastIndex(of: ":") {
            let named = String(text[..<colon])
            guard !named.contains(":") else { return nil }
            host = named.isEmpty ? "0.0.0.0" : named
            portText = String(text[text.index(after: colon)...])
        }
        guard !host.isEmpty, let port = Int(portText), (0 ... 65535).contains(port) else { return nil }
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The same host with another port (the one chosen for port 0).
    public func withPort(_ port: Int) -> HTTPAddress {
        var copy = self
        copy.port = port
        return copy
    }

    /// Whether only this machine can reach it: a loopback address (127.0.0.0/8, ::1, localhost).
    public var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
