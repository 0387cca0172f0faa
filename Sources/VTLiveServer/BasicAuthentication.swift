import Foundation
import Hummingbird
import Synchronization

/// `--http-auth`: every request needs a user and password of the file (HTTP Basic, RFC 7617);
/// TLS is a reverse proxy's work. A wrong or missing password is answered 401 after `delay`,
/// counted, and the next request of that connection waits its turn behind it.
///
/// A good header is remembered in memory (a few dozen at most), so that a player fetching a
/// part every 200 ms does not pay for a bcrypt hash each time.
struct BasicAuthentication<Context: RequestContext>: RouterMiddleware {
    let passwords: PasswordFile
    let delay: Duration
    let failures: @Sendable () -> Void
    private let accepted = AcceptedCredentials()

    init(passwords: PasswordFile, delay: Duration, failures: @escaping @Sendable () -> Void) {
        self.passwords = passwords
        self.delay = delay
        self.failures = failures
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let header = request.headers[.authorization], accepted.contains(header) || check(header) {
            accepted.insert(header)
            return try await next(request, context)
        }
        // Without a header at all (a browser's first try) the answer comes at once.
        if request.headers[.authorization] != nil {
            failures()
            try await Task.sleep(for: delay)
        }
        return Response(status: .unauthorized,
                        headers: [.wwwAuthenticate: "Basic realm=\"vtrecord\", charset=\"UTF-8\"", .contentLength: "0"])
    }

    private func check(_ header: String) -> Bool {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
              let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return false }
        return passwords.check(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
    }
}

/// Authorization headers already checked and found good.
final class AcceptedCredentials: Sendable {
    private let headers = Mutex<Set<String>>([])

    func contains(_ header: String) -> Bool { headers.withLock { $0.contains(header) } }

    func insert(_ header: String) {
        headers.withLock { set in
            if set.count >= 64 { set.removeAll() }
            set.insert(header)
        }
    }
}
