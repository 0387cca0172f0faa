import Foundation
import Testing

/// `--http`'s server is linked into vtrecord like every other module: the binary alone serves,
/// wherever it is copied, with nothing loaded beside it.
@Suite struct HTTPLibraryTests {
    @Test func aCopiedBinaryServesHTTPOnItsOwn() throws {
        let dir = try TemporaryDirectory()
        let binary = dir.url.appendingPathComponent("vtrecord").path
        try FileManager.default.copyItem(atPath: Tools.vtrecord, toPath: binary)
        let output = dir.url.appendingPathComponent("out.mp4").path
        let r = try Tools.run(binary, ["--test-pattern", "--size", "160x120", "--frames", "5", "--encoder", "x264",
                                       "--http", "127.0.0.1:0", "-o", output])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("serving the live view on http://127.0.0.1:"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: output))
        // Nothing of the server is a library of its own: no DT_NEEDED names one, and nothing is dlopen'ed.
        let needed = try Tools.run("readelf", ["-d", binary])
        #expect(!needed.stdoutText.contains("vtrecord-http"))
    }
}
