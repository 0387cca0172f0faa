import Foundation
import VTCore

/// Where presets are found: the user's directory, then the installation's, then the ones
/// compiled into the binary. A file of the same name in an earlier place wins.
struct PresetLibrary: Sendable {
    /// `$XDG_CONFIG_HOME/vtrecord/presets` (default `~/.config/vtrecord/presets`).
    let userDirectory: String?
    /// `PREFIX/share/vtrecord/presets`, found from where the binary is (`PREFIX/bin`).
    let systemDirectory: String?

    /// The shipped presets (presets/*.toml), compiled in as resources.
    static let builtIn: [(name: String, bytes: [UInt8])] = [
        ("720p30", PackageResources._20p30_toml),
        ("1080p30", PackageResources._080p30_toml),
        ("1080p30-archive", PackageResources._080p30_archive_toml),
        ("low-latency", PackageResources.low_latency_toml),
        ("low-bandwidth", PackageResources.low_bandwidth_toml),
        ("1080p30-mjpeg", PackageResources._080p30_mjpeg_toml),
        ("vaapi-1080p30", PackageResources.vaapi_1080p30_toml),
    ]

    static func standard(environment: [String: String] = ProcessInfo.processInfo.environment) -> PresetLibrary {
        var user: String?
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            user = config + "/vtrecord/presets"
        } else if let home = environment["HOME"], !home.isEmpty {
            user = home + "/.config/vtrecord/presets"
        }
        var system: String?
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let prefix = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent()
            system = prefix.appendingPathComponent("share/vtrecord/presets").path
        }
        return PresetLibrary(userDirectory: user, systemDirectory: system)
    }

    /// A name (`720p30`) is looked up; anything with a slash or ending in `.toml` is a file.
    static func isPath(_ reference: String) -> Bool {
        reference.contains("/") || reference.hasSuffix(".toml")
    }

    /// What a `--preset` value is called: the name, or a file's name without `.toml`.
    static func name(of reference: String) -> String {
        isPath(reference) ? URL(fileURLWithPath: reference).deletingPathExtension().lastPathComponent : reference
    }

    /// Reads and checks one preset.
    func load(_ reference: String) throws -> Preset {
        if Self.isPath(reference) {
            return try Preset(name: Self.name(of: reference), origin: .file(reference), text: try Self.read(reference))
        }
        guard !reference.isEmpty, !reference.hasPrefix("."), !reference.contains("/") else {
            throw UsageError("--preset \(reference): not a preset name; give a name from 'vtrecord presets list' or a path")
        }
        for directory in [userDirectory, systemDirectory].compactMap({ $0 }) {
            let path = directory + "/" + reference + ".toml"
            if FileManager.default.fileExists(atPath: path) {
                return try Preset(name: reference, origin: .file(path), text: try Self.read(path))
            }
        }
        if let shipped = Self.builtIn.first(where: { $0.name == reference }) {
            return try Preset(name: reference, origin: .builtIn(reference), text: String(decoding: shipped.bytes, as: UTF8.self))
        }
        let names = available().map(\.name)
        var message = "--preset \(reference): no preset of that name"
        if let nearest = NearestNames.suggestion(for: reference, in: names) {
            message += "; did you mean \(nearest)?"
        } else {
            message += "."
        }
        message += " Presets: \(names.joined(separator: ", ")) ('vtrecord presets list'); a path reads a file."
        throw UsageError(message)
    }

    /// One line of `vtrecord presets list`.
    struct Listing: Sendable {
        let name: String
        /// Where the preset that wins comes from.
        let origin: PresetOrigin
        /// What it overrides (a shipped preset replaced by a user's file).
        let overrides: [PresetOrigin]
    }

    /// Every preset that a name finds, sorted by name.
    func available() -> [Listing] {
        var found: [String: [PresetOrigin]] = [:]
        for directory in [userDirectory, systemDirectory].compactMap({ $0 }) {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for file in files.sorted() where file.hasSuffix(".toml") {
                found[String(file.dropLast(5)), default: []].append(.file(directory + "/" + file))
            }
        }
        for shipped in Self.builtIn {
            found[shipped.name, default: []].append(.builtIn(shipped.name))
        }
        return found.keys.sorted().map { name in
            let origins = found[name] ?? []
            return Listing(name: name, origin: origins[0], overrides: Array(origins.dropFirst()))
        }
    }

    /// A text file's contents; a file that cannot be read is a usage error naming `what` it
    /// was ("--preset x.toml", "batch file jobs.toml").
    static func read(_ path: String, as what: String? = nil) throws -> String {
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            guard let text = String(data: data, encoding: .utf8) else {
                throw PresetError(origin: .file(path), line: nil, key: nil, problem: "not UTF-8 text")
            }
            return text
        } catch let error as PresetError {
            throw error
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw UsageError("\(what ?? "--preset \(path)"): cannot read it: \(Self.plainReason(path, fallback: reason))")
        }
    }

    /// strerror for the usual reasons a file cannot be read, which Foundation words loosely.
    private static func plainReason(_ path: String, fallback: String) -> String {
        var info = stat()
        if stat(path, &info) != 0 { return SystemError.reason(errno) }
        if (info.st_mode & S_IFMT) == S_IFDIR { return "it is a directory" }
        if access(path, R_OK) != 0 { return SystemError.reason(errno) }
        return fallback
    }
}
