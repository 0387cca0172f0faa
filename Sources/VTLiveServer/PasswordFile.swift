import CCrypt
import Foundation
import Synchronization
import VTCore

/// `--http-auth FILE`: `user:hash` lines, the hashes as crypt(3) makes them (bcrypt from
/// `htpasswd -nB USER`, SHA-crypt from `openssl passwd -6`, yescrypt from `mkpasswd`); blank
/// lines and lines starting with `#` are skipped. A plain password, or a hash libcrypt cannot
/// check (htpasswd's default MD5 `$apr1$`), is refused when the file is read.
///
/// A check hashes the password given with the user's salt and compares the result with the
/// stored hash in constant time; an unknown user costs the same hashing, against a hash of the
/// same kind, so the answer's time says nothing of which users exist.
public struct PasswordFile: Sendable {
    public struct Problem: ReportableError {
        public var description: String
        public var exitStatus: ExitStatus { .usage }
    }

    private let hashes: [String: String]
    /// A hash of the first user's kind, for unknown users.
    private let decoy: String

    public init(path: String) throws(Problem) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Problem(description: "--http-auth \(path): cannot read the file: give a file of user:hash lines (htpasswd -nB USER)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw Problem(description: "--http-auth \(path): the file is not UTF-8 text")
        }
        try self.init(text: text, name: path)
    }

    public init(text: String, name: String) throws(Problem) {
        var hashes: [String: String] = [:]
        // "\r\n" is one Character to Swift: a file with Windows line ends is split on both.
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces.union(CharacterSet(charactersIn: "\r")))
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "--http-auth \(name) line \(number + 1)"
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw Problem(description: "\(place): expected user:hash (htpasswd -nB USER makes one)")
            }
            let user = String(line[..<colon])
            let hash = String(line[line.index(after: colon)...])
            guard hash.hasPrefix("$") else {
                throw Problem(description: "\(place): the password of \(user) is not hashed: make the line with htpasswd -nB \(user), or openssl passwd -6")
            }
            guard Self.hash("", setting: hash).map({ $0.hasPrefix(String(hash.prefix(3))) }) == true else {
                throw Problem(description: "\(place): the hash of \(user) is of a kind libcrypt cannot check (htpasswd's default $apr1$ among them): use bcrypt (htpasswd -B) or SHA-crypt (openssl passwd -6)")
            }
            guard hashes[user] == nil else { throw Problem(description: "\(place): \(user) is listed twice") }
            hashes[user] = hash
        }
        guard let first = hashes.values.sorted().first else {
            throw Problem(description: "--http-auth \(name): no user:hash line in the file")
        }
        self.hashes = hashes
        decoy = first
    }

    public var users: [String] { hashes.keys.sorted() }

    /// Whether `password` is `user`'s.
    public func check(user: String, password: String) -> Bool {
        let stored = hashes[user]
        let setting = stored ?? decoy
        guard let computed = Self.hash(password, setting: setting) else { return false }
        let same = Self.constantTimeEqual(Array(computed.utf8), Array(setting.utf8))
        return same && stored != nil
    }

    /// crypt_r: the hash of `password` with the method and salt `setting` names; nil if libcrypt
    /// refuses it (its failure tokens start with '*').
    static func hash(_ password: String, setting: String) -> String? {
        var data = crypt_data()
        guard let result = crypt_r(password, setting, &data) else { return nil }
        let text = String(cString: result)
        return text.hasPrefix("*") ? nil : text
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0 ..< max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
