import Foundation
import Testing

/// `--http`'s server lives in libvtrecord-http.so, which vtrecord loads only when asked: the
/// binary holds none of the server's packages (their conformance records would lengthen every
/// run's start), and a binary without its library says so.
@Suite struct HTTPLibraryTests {
    static var library: String {
        (URL(fileURLWithPath: Tools.vtrecord).deletingLastPathComponent().path as NSString)
            .appendingPathComponent("libvtrecord-http.so")
    }

    /// Symbols of a module in a binary's symbol table (Swift mangles a module's name into every
    /// symbol of it: `8NIOCore`, `11Hummingbird`).
    static func symbols(of module: String, in binary: String) throws -> Int {
        let nm = try Tools.run("nm", [binary])
        try #require(nm.status == 0, "nm \(binary): \(nm.stderr)")
        let mangled = "\(module.utf8.count)\(module)"
        return nm.stdoutText.split(separator: "\n").count { $0.contains(mangled) }
    }

    @Test func theBinaryHoldsNoneOfTheServersPackages() throws {
        for module in ["NIOCore", "NIOPosix", "Hummingbird", "Prometheus", "VTLiveServer"] {
            #expect(try Self.symbols(of: module, in: Tools.vtrecord) == 0, "vtrecord links \(module)")
            #expect(try Self.symbols(of: module, in: Self.library) > 0, "libvtrecord-http.so lacks \(module)")
        }
        // Nothing of vtrecord loads it: it is no DT_NEEDED of the binary.
        let needed = try Tools.run("readelf", ["-d", Tools.vtrecord])
        #expect(!needed.stdoutText.contains("libvtrecord-http"))
    }

    @Test func withoutItsLibraryHTTPIsRefusedAndNothingIsWritten() throws {
        let dir = try TemporaryDirectory()
        let binary = dir.url.appendingPathComponent("vtrecord").path
        try FileManager.default.copyItem(atPath: Tools.vtrecord, toPath: binary)
        let output = dir.url.appendingPathComponent("out.mp4").path
        let r = try Tools.run(binary, ["--test-pattern", "--frames", "5", "--encoder", "x264", "--http", "127.0.0.1:0",
                                         "-o", output])
        #expect(r.status == 2, "\(r.stderr)")
        #expect(r.stderr.contains("libvtrecord-http.so") && r.stderr.contains("make install"), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").count == 1, "one line: \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        // The same binary records without --http.
        let plain = try Tools.run(binary, ["--test-pattern", "--frames", "5", "--quiet", "-o", output])
        #expect(plain.status == 0, "\(plain.stderr)")
    }
}
