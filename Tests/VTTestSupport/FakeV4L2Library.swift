import Foundation

/// The fake camera's LD_PRELOAD library, compiled from Tests/FakeV4L2/*.c the first time a test
/// process asks for it, into .build/fake-v4l2 of the package.
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

    private static func build() throws(BuildFailed) -> String {
        let sourceDirectory = packageRoot.appendingPathComponent("Tests/FakeV4L2")
        let outputDirectory = packageRoot.appendingPathComponent(".build/fake-v4l2")
        let library = outputDirectory.appendingPathComponent("libfakev4l2.so").path
        // Compiled under a name of its own and renamed into place, so a test process building
        // at the same moment never loads a half-written file.
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
            let result = try ChildProcess.run(compile, environment: environment, timeout: .seconds(300))
            guard result.status == 0 else {
                throw BuildFailed(description: "\(compile.joined(separator: " ")): \(result.transcript)")
            }
            guard rename(partial, library) == 0 else {
                throw BuildFailed(description: "rename \(partial) to \(library): \(String(cString: strerror(errno)))")
            }
            return library
        } catch let error as BuildFailed {
            throw error
        } catch {
            throw BuildFailed(description: "building the fake camera library: \(error)")
        }
    }
}
