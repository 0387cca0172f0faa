import Foundation

/// A helper program under Tests/Peers run by a test: started, waited for until it says on
/// standard error that it is ready, and stopped with SIGTERM, after which the last line of its
/// standard output is its report, in JSON. One that never gets ready, or is dropped without
/// being stopped, is killed, and `cleanUp` runs (a file system to detach).
///
/// Not for use from several threads at once.
public final class ReportingPeer<Report: Decodable> {
    private let child: ChildProcess
    private let name: String
    private let cleanUp: () -> Void
    private var report: Report?

    /// `notReady` makes the error thrown when the peer has not said `ready` within `readyWithin`,
    /// from what it printed.
    public init(name: String, arguments: [String], ready: String, readyWithin: Duration,
                notReady: (String) -> any Error, cleanUp: @escaping () -> Void = {}) throws {
        self.name = name
        self.cleanUp = cleanUp
        child = try ChildProcess(arguments, environment: ProcessInfo.processInfo.environment, signalsUnblocked: true)
        guard child.waitForStandardError(containing: ready, timeout: readyWithin) else {
            child.send(SIGKILL)
            let result = child.wait(timeout: .seconds(2))
            cleanUp()
            throw notReady(result.transcript)
        }
    }

    deinit {
        if report == nil && child.isRunning {
            child.send(SIGKILL)
            _ = child.wait(timeout: .seconds(2))
            cleanUp()
        }
    }

    /// Ends the peer (SIGTERM) and returns its report.
    public func stop() throws -> Report {
        if let report { return report }
        if child.isRunning { child.send(SIGTERM) }
        let result = child.wait(timeout: .seconds(5))
        guard let line = result.standardOutputText.split(separator: "\n").last,
              let report = try? JSONDecoder().decode(Report.self, from: Data(line.utf8)) else {
            cleanUp()
            throw PeerError.noReport(peer: name, log: result.transcript)
        }
        self.report = report
        return report
    }
}
