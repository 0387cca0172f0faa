import Foundation
import Synchronization

/// The C test doubles (the fake camera's and the fake VA driver's libraries) and their small
/// test clients, compiled the first time a test process asks for each, into .build of the
/// package, unless what is there was built by the same command from sources no newer.
///
/// They are plain C loaded into other programs (v4l2-ctl, ffmpeg, vtrecord), not parts of the
/// package, so SwiftPM does not build them; compiling them here keeps them in step with their
/// sources without a build step anyone has to remember. `make test` runs several test
/// processes side by side and one after another; each compiling every double again cost a
/// minute of CPU beside the real-time tests.
public enum CBuild {
    public struct Failed: Error, CustomStringConvertible {
        public let description: String
    }

    /// The package's root directory, found from this file's place in it.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()    // VTTestSupport
        .deletingLastPathComponent()    // Tests
        .deletingLastPathComponent()

    /// The absolute path of `relativePath` inside the package.
    public static func path(_ relativePath: String) -> String {
        packageRoot.appendingPathComponent(relativePath).path
    }

    /// `output` (a path inside the package), built once per test process by the compiler
    /// command `command` gives for a partial file; later calls, and calls made meanwhile from
    /// other threads, get the same result.
    public static func product(_ output: String, command: (_ partial: String) throws -> [String]) throws -> String {
        try products.withLock { built in
            if let done = built[output] { return done }
            let result = Result { () throws(Failed) in try build(output, command: command) }
            built[output] = result
            return result
        }.get()
    }

    private static let products = Mutex<[String: Result<String, Failed>]>([:])

    private static func build(_ output: String, command: (String) throws -> [String]) throws(Failed) -> String {
        let final = path(output)
        let partial = "\(final).\(getpid()).partial"
        do {
            try FileManager.default.createDirectory(atPath: (final as NSString).deletingLastPathComponent,
                                                    withIntermediateDirectories: true)
            let compile = try command(partial)
            // The command as it is for any process, to compare with the one that built `final`.
            let recipe = compile.map { $0 == partial ? "OUTPUT" : $0 }.joined(separator: "\n")
            if isUpToDate(final, recipe: recipe, command: compile) { return final }
            try compileAndInstall(compile, partial: partial, final: final)
            // Written after the product: a product without its recipe is built again.
            try Data(recipe.utf8).write(to: URL(fileURLWithPath: "\(final).recipe"), options: .atomic)
            return final
        } catch let error as Failed {
            throw error
        } catch {
            throw Failed(description: "building \(output): \(error)")
        }
    }

    /// `final` exists, was built by `recipe`, and is newer than every file it is built from:
    /// the files the command names, and every file beside them and in its include directories
    /// (the headers).
    private static func isUpToDate(_ final: String, recipe: String, command: [String]) -> Bool {
        guard let built = try? String(contentsOfFile: "\(final).recipe", encoding: .utf8), built == recipe,
              let productTime = modificationTime(final) else { return false }
        var directories = Set<String>()
        for (index, word) in command.enumerated() {
            if word.hasPrefix("/"), FileManager.default.fileExists(atPath: word), word.hasSuffix(".c") {
                directories.insert((word as NSString).deletingLastPathComponent)
            } else if word == "-I", index + 1 < command.count {
                directories.insert(command[index + 1])
            }
        }
        for directory in directories {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
            for name in names {
                guard let time = modificationTime("\(directory)/\(name)") else { return false }
                if time >= productTime { return false }
            }
        }
        return true
    }

    private static func modificationTime(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// The include flag for Tests/TestDoubles, the code every double shares.
    public static var sharedIncludes: [String] { ["-I", path("Tests/TestDoubles")] }

    /// The C files directly in `directory` (relative to the package), sorted, as absolute paths.
    public static func sources(in directory: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: path(directory))
            .filter { $0.hasSuffix(".c") }
            .sorted()
        guard !names.isEmpty else { throw Failed(description: "no C sources in \(directory)") }
        return names.map { path("\(directory)/\($0)") }
    }

    /// pkg-config's answer for `arguments` (e.g. ["--cflags", "--libs", "libva"]), split into words.
    public static func pkgConfig(_ arguments: [String]) throws -> [String] {
        let result = try ChildProcess.run(["pkg-config"] + arguments, environment: cleanEnvironment)
        guard result.status == 0 else {
            throw Failed(description: "pkg-config \(arguments.joined(separator: " ")): \(result.transcript)")
        }
        return result.standardOutputText.split(whereSeparator: \.isWhitespace).map(String.init)
    }

    /// The compiler runs without the test's preloaded doubles.
    private static var cleanEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        return environment
    }

    /// Runs a compiler command that writes `partial`, then renames it to `final`, so a test
    /// process building at the same moment never runs or loads a half-written file.
    private static func compileAndInstall(_ command: [String], partial: String, final: String) throws {
        let result = try ChildProcess.run(command, environment: cleanEnvironment, timeout: .seconds(300))
        guard result.status == 0 else {
            throw Failed(description: "\(command.joined(separator: " ")): \(result.transcript)")
        }
        guard rename(partial, final) == 0 else {
            throw Failed(description: "rename \(partial) to \(final): \(String(cString: strerror(errno)))")
        }
    }
}

/// LD_PRELOAD for a child that gets one more preloaded library: the doubles compose, so a child
/// can see the fake camera and the fake VA driver at once.
public enum LDPreload {
    /// `library` in front of whatever `environment` preloads already (once, however often added).
    public static func adding(_ library: String, to environment: [String: String]) -> String {
        let existing = (environment["LD_PRELOAD"] ?? "").split(separator: ":").map(String.init)
        return ([library] + existing.filter { $0 != library && !$0.isEmpty }).joined(separator: ":")
    }
}
