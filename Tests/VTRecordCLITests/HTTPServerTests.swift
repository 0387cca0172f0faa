import Foundation
import Testing
import VTTestSupport

/// `--http`'s server is linked into vtrecord like every other module: the binary alone serves,
/// wherever it is copied, with nothing loaded beside it; and it keeps answering while clients
/// that send nothing useful hold hundreds of connections.
@Suite struct HTTPServerTests {
    static let peers = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Peers").path

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
        // Nothing of the server is a library of its own: no DT_NEEDED names one.
        let needed = try Tools.run("readelf", ["-d", binary])
        #expect(!needed.stdoutText.contains("vtrecord-http"))
    }

    /// 300 clients each send a request head a byte every two seconds (slow-loris); while they
    /// are all connected, a well-behaved client is answered within a second every time, and
    /// the recording drops nothing. Before, 128 connections were the most, and the good
    /// client waited for the slow ones' 10 s to run out.
    @Test func aGoodClientIsAnsweredBesideThreeHundredSlowOnes() throws {
        let dir = try TemporaryDirectory()
        let child = try ChildProcess(Tools.vtrecordAboveTheSuite
                                     + ["--test-pattern", "--size", "160x120", "--realtime", "drop", "--duration", "30s",
                                        "--speed", "ultrafast", "--http", "127.0.0.1:0",
                                        "--json-summary", dir.path("summary.json"), "-o", dir.path("x.mp4")],
                                     environment: ProcessInfo.processInfo.environment)
        defer { if child.isRunning { child.send(SIGKILL) } }
        try #require(child.waitForStandardError(containing: "serving the live view on http://127.0.0.1:", timeout: .seconds(15)),
                     "no server: \(child.standardErrorSoFar)")
        let port = try #require(child.standardErrorSoFar.firstMatch(of: /127\.0\.0\.1:(\d+)\//).flatMap { Int($0.1) })
        // Good requests for 6 s from the first second on: the slow ones are closed 10 s after they opened.
        let peer = try Tools.run("/usr/bin/python3", [Self.peers + "/slow_clients.py", "\(port)", "300", "6"])
        try #require(peer.status == 0, "\(peer.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: peer.stdout) as? [String: Any])
        #expect(report["opened"] as? Int == 300, "\(report)")
        #expect(report["still_open"] as? Int ?? 0 >= 290, "the slow clients were let go early: \(report)")
        let good = try #require(report["good"] as? [[Any]])
        #expect(good.count >= 5, "\(good)")
        for answer in good {
            #expect(answer.first as? Int == 200 && (answer.last as? Double ?? 99) < 1, "\(good)")
        }
        child.send(SIGINT)
        let r = child.wait(timeout: .seconds(20))
        try #require(r.status == 0, "\(r.standardError)")
        let summary = try #require(try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: dir.path("summary.json")))) as? [String: Any])
        #expect(summary["dropped_queue"] as? Int == 0, "\(summary)")
    }
}
