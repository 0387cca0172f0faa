import Foundation
import Synchronization

/// The fake camera's LD_PRELOAD library, compiled from Tests/FakeV4L2/*.c the first time a test
/// process asks for it, into .build/fake-v4l2 of the package; and the small test clients in
/// Tests/FakeV4L2/clients.
///
/// It is a plain C library loaded into other programs (v4l2-ctl, ffmpeg, vtrecord), not a part
/// of the package, so SwiftPM does not build it; compiling it here keeps it in step with its
/// sources without a build step anyone has to remember.
public enum FakeV4L2Library {
    public struct BuildFailed: Error, CustomStringConvertible {
        public let description: String
    }

    /// The package's root directory, found from this file's place in it.
    public static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()    // VTTestSupport
        .deletingLastPathComponent()    // Tests
        .deletingLastPathComponent()

    /// The built library's path; builds it on first use.
    public static func path() throws -> String {
        try built.get()
    }

    private static let built: Result<String, BuildFailed> = Result { () throws(BuildFailed) in try build() }

    /// A test client from Tests/FakeV4L2/clients/<name>.c, linked with libv4l2; built on first
    /// use. It is run with the camera's environment like any other program.
    public static func client(_ name: String) throws -> String {
        try clients.withLock { built in
            if let done = built[name] { return done }
            let result = Result { () throws(BuildFailed) in try buildClient(name) }
            built[name] = result
            return result
        }.get()
    }

    private static let clients = Mutex<[String: Result<String, BuildFailed>]>([:])

    private static func buildClient(_ name: String) throws(BuildFailed) -> String {
        let source = packageRoot.appendingPathComponent("Tests/FakeV4L2/clients/\(name).c").path
        let outputDirectory = packageRoot.appendingPathComponent(".build/fake-v4l2")
        let program = outputDirectory.appendingPathComponent(name).path
        let partial = "\(program).\(getpid()).partial"
        do {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
            let compile = ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-o", partial, source, "-lv4l2"]
            try compileAndInstall(compile, partial: partial, final: program)
            return program
        } catch let error as BuildFailed {
            throw error
        } catch {
            throw BuildFailed(description: "building \(name): \(error)")
        }
    }

    /// Runs a compiler command that writes `partial`, then renames it to `final`, so a test
    /// process building at the same moment never runs or loads a half-written file.
    private static func compileAndInstall(_ command: [String], partial: String, final: String) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        let result = try ChildProcess.run(command, environment: environment, timeout: .seconds(300))
        guard result.status == 0 else {
            throw BuildFailed(description: "\(command.joined(separator: " ")): \(result.transcript)")
        }
        guard rename(partial, final) == 0 else {
            throw BuildFailed(description: "rename \(partial) to \(final): \(String(cString: strerror(errno)))")
        }
    }

    private static func build() throws(BuildFailed) -> String {
        let sourceDirectory = packageRoot.appendingPathComponent("Tests/FakeV4L2")
        let outputDirectory = packageRoot.appendingPathComponent(".build/fake-v4l2")
        let library = outputDirectory.appendingPathComponent("libfakev4l2.so").path
        let partial = outputDirectory.appendingPathComponent("libfakev4l2.so.\(getpid()).partial").path
        do {
            let sources = try FileManager.default.contentsOfDirectory(atPath: sourceDirectory.path)
                .filter { $0.hasSuffix(".c") }
                .sorted()
                .map { sourceDirectory.appendingPathComponent($0).path }
            guard !sources.isEmpty else { throw BuildFailed(description: "no C sources in \(sourceDirectory.path)") }
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
            var environment = ProcessInfo.processInfo.environment
            environment["LD_PRELOAD"] = nil
            let turbojpeg = try ChildProcess.run(["pkg-config", "--cflags", "--libs", "libturbojpeg"],
                                                 environment: environment)
            guard turbojpeg.status == 0 else {
                throw BuildFailed(description: "pkg-config libturbojpeg: \(turbojpeg.transcript)")
            }
            let flags = turbojpeg.standardOutputText.split(whereSeparator: \.isWhitespace).map(String.init)
            let compile = ["cc", "-std=c11", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o", partial]
                + sources + flags + ["-ldl", "-lpthread"]
            try compileAndInstall(compile, partial: partial, final: library)
            return library
        } catch let error as BuildFailed {
            throw error
        } catch {
            throw BuildFailed(description: "building the fake camera library: \(error)")
        }
    }
}
