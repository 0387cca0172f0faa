import Foundation
import Hummingbird
import NIOCore
import Testing
@testable import VTLiveServer

/// `--http-auth`: the password file as it is read, and the server behind it.
@Suite struct PasswordFileTests {
    /// What `openssl passwd -6 -salt vtrecordsalt secret` prints.
    static let secretHash = "$6$vtrecordsalt$ShJCx9JlnNwY5vme1sWrQWlhz7wBRifOl2yStgsu56f4Irw8jHX9/wZuuQ8oy3ccX3NNnFjZr2uzZznnOocnT1"

    static func problem(_ text: String) -> String? {
        do {
            _ = try PasswordFile(text: text, name: "users")
            return nil
        } catch {
            return error.description
        }
    }

    static func basic(_ user: String, _ password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    @Test func hashesAreLibcryptsSHACrypt() {
        // The example of the SHA-crypt specification (Drepper, "Unix crypt using SHA-256 and SHA-512").
        #expect(PasswordFile.hash("Hello world!", setting: "$6$saltstring")
            == "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1")
        #expect(PasswordFile.hash("secret", setting: "$6$vtrecordsalt$") == Self.secretHash)
        #expect(PasswordFile.hash("secret", setting: "$apr1$vtrecord$") == nil)
    }

    @Test func commentsAndBlankLinesAreSkipped() throws {
        // bcrypt of "other" at cost 4 (quick), of the kind `htpasswd -nB -C 4 bob` makes.
        let bcrypt = "$2b$04$abcdefghijklmnopqrstuu0HtfOlPbTiymk5tcV.3TsFPDd3SYZqu"
        let file = try PasswordFile(text: "# who may watch\n\n   \nalice:\(Self.secretHash)  \n  # carol left\nbob:\(bcrypt)\n",
                                    name: "users")
        #expect(file.users == ["alice", "bob"])
        #expect(file.check(user: "alice", password: "secret"))
        #expect(file.check(user: "bob", password: "other"))
        #expect(!file.check(user: "alice", password: "other"))
        #expect(!file.check(user: "alice", password: "Secret"))
        #expect(!file.check(user: "carol", password: "secret"))
        #expect(!file.check(user: "", password: ""))
    }

    @Test func windowsLineEndsAreRead() throws {
        let file = try PasswordFile(text: "# who may watch\r\nalice:\(Self.secretHash)\r\nbob:\(Self.secretHash)\r\n", name: "users")
        #expect(file.users == ["alice", "bob"])
    }

    @Test func aFileThatCannotBeCheckedIsRefusedWithItsLine() {
        #expect(Self.problem("# one user\nalice:secret") == "--http-auth users line 2: the password of alice is not hashed: "
            + "make the line with htpasswd -nB alice, or openssl passwd -6")
        #expect(Self.problem("alice:\(Self.secretHash)\nalice:\(Self.secretHash)") == "--http-auth users line 2: alice is listed twice")
        #expect(Self.problem("bob:$apr1$hT2N1dcx$Bc0lWUqUMdqGLh3n3n6SW/")?
            .hasPrefix("--http-auth users line 1: the hash of bob is of a kind libcrypt cannot check") == true)
        #expect(Self.problem("alice") == "--http-auth users line 1: expected user:hash (htpasswd -nB USER makes one)")
        #expect(Self.problem(":\(Self.secretHash)") == "--http-auth users line 1: expected user:hash (htpasswd -nB USER makes one)")
        #expect(Self.problem("# nobody\n\n") == "--http-auth users: no user:hash line in the file")
        #expect(Self.problem("") == "--http-auth users: no user:hash line in the file")
    }

    @Test func aFileThatCannotBeReadSaysSo() {
        #expect(throws: PasswordFile.Problem.self) { try PasswordFile(path: "/nonexistent/vtrecord-users") }
    }

    @Test func everyRequestNeedsTheRightPassword() async throws {
        let passwords = try PasswordFile(text: "alice:\(Self.secretHash)\n", name: "users")
        let server = TestServer.make {
            $0.address = HTTPAddress("127.0.0.1:0")!
            $0.passwords = passwords
            $0.refusalDelay = .milliseconds(5)
        }
        try await TestServer.test(server, .live) { client in
            let challenge = #"Basic realm="vtrecord", charset="UTF-8""#
            for method in [HTTPRequest.Method.get, .head] {
                let none = try await client.execute(uri: "/status", method: method)
                #expect(none.status == .unauthorized, "\(method)")
                #expect(none.headers[.wwwAuthenticate] == challenge, "\(method)")
                #expect(none.body.readableBytes == 0, "\(method)")
            }
            // A browser's first try, without a header, is not a failure.
            #expect(server.report.authFailures == 0)

            for header in [Self.basic("alice", "wrong"), Self.basic("carol", "secret"), "Basic !!!", "Bearer abc"] {
                let refused = try await client.execute(uri: "/status", method: .get, headers: [.authorization: header])
                #expect(refused.status == .unauthorized, "\(header)")
                #expect(refused.headers[.wwwAuthenticate] == challenge, "\(header)")
            }
            #expect(server.report.authFailures == 4)

            let good = try await client.execute(uri: "/status", method: .get, headers: [.authorization: Self.basic("alice", "secret")])
            #expect(good.status == .ok && good.bytes == TestServer.status)
            // A good header remembered lets no other password through.
            let again = try await client.execute(uri: "/status", method: .get, headers: [.authorization: Self.basic("alice", "wrong")])
            #expect(again.status == .unauthorized)
            // Every route is behind it, POST /stop among them.
            #expect(try await client.execute(uri: "/stop", method: .post).status == .unauthorized)
            #expect(try await client.execute(uri: "/no-such-page", method: .get).status == .unauthorized)
        }
        #expect(server.report.authFailures == 5)
    }
}
