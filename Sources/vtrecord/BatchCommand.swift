import ArgumentParser
import Foundation
import Synchronization
import VTCore
import VTRecorder

#if canImport(Glibc)
import Glibc
#endif

/// `vtrecord batch FILE.toml`: runs a list of recordings in order.
struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Run the recordings a TOML file lists, one after another.",
        discussion: """
            Each [[job]] takes the recording options' long names as keys (as a preset does), \
            plus name and preset (a name or path, or an array); [defaults] applies to every job, \
            and a job's own keys replace it. Every job is checked before the first runs; a bad \
            key or value exits 2 naming file, line and key. A job that fails does not stop the \
            rest. At the end one line per job says how it went; the exit status is 0 when every \
            job succeeded, else the status of the first that failed. SIGINT or SIGTERM finishes \
            the running job cleanly and runs no more.
            """)

    @Argument(help: ArgumentHelp("The batch file.", valueName: "file.toml"))
    var file: String

    @Flag(name: .long, help: "Print the jobs' results as JSON on standard output: an array of {job, name, status, summary}, where summary is the job's JSON summary (null when it wrote none).")
    var json = false

    @Flag(name: .long, help: "Run every job with --quiet: only warnings and errors while they record, then the batch's line per job.")
    var quiet = false

    func run() throws {
        // A closed terminal stops the batch like Ctrl-C: the running job must not go on alone.
        StopSignals.blockStopSignals(hangUp: true)
        let batch = try BatchFile(path: file)
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let runner = try BatchRunner(executable: executable,
                                     jobs: quiet ? batch.jobs.map { job in
                                         var job = job
                                         job.arguments.append("--quiet")
                                         return job
                                     } : batch.jobs)
        StopSignals.start(
            hangUp: true,
            onFirst: { name in
                writeToStandardError("vtrecord: \(name): finishing the running job; no more jobs will start")
                runner.stop(signal: SIGINT)
            },
            onSecond: {
                // The running job aborts on its own second signal, without cutting an access unit.
                runner.stop(signal: SIGINT)
                runner.cleanUp()
                Glibc.exit(ExitStatus.aborted.rawValue)
            })
        let results = runner.run()
        for result in results {
            writeToStandardError("vtrecord: \(result.line)")
        }
        if json {
            // The jobs' summaries are passed on as they were read.
            let rows: [[String: Any]] = results.map { result in
                ["job": result.job.number, "name": result.job.name,
                 "status": result.status == BatchRunner.Result.notRun ? NSNull() : Int(result.status),
                 "summary": result.summary ?? NSNull()]
            }
            var data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys])
            data.append(0x0A)
            FileHandle.standardOutput.write(data)
        }
        if let failed = results.first(where: { $0.status != 0 && $0.status != BatchRunner.Result.notRun }) {
            throw ExitCode(failed.status)
        }
    }
}

/// Runs the jobs as child processes of this binary, so each has its own signals, exit status
/// and memory, exactly as if it had been typed.
///
/// Sendable: the running job's process id and the stop flag sit behind a mutex (the signal
/// thread reads them); the rest is immutable.
final class BatchRunner: Sendable {
    struct Result {
        /// The exit status of a job that never started.
        static let notRun: Int32 = -1

        let job: BatchFile.Job
        let status: Int32
        let summary: [String: Any]?
        /// The job's last line of error output, when it failed.
        let error: String?

        var line: String {
            let head = "job \(job.number) (\(job.name)): "
            if status == Self.notRun { return head + "not run (stopped by a signal)" }
            let frames = (summary?["frames_encoded"] as? Int).map { "\($0) frames" }
            // The files written, not the -o template they were named from.
            let files = summary?["segments"] as? [String] ?? []
            let output = files.count > 1 ? "to \(files.count) files, \(files[0]) … \(files[files.count - 1])"
                : (files.first ?? summary?["output"] as? String).map { "to \($0)" }
            let reason = (summary?["stop_reason"] as? String).map { "stopped by \($0)" }
            let details = [frames, output, reason].compactMap { $0 }.joined(separator: " ")
            if status == 0 { return head + "ok" + (details.isEmpty ? "" : ", " + details) }
            return head + "failed (exit \(status))" + (error.map { ": \($0)" } ?? "") + (details.isEmpty ? "" : "; " + details)
        }
    }

    private let executable: String
    private let jobs: [BatchFile.Job]
    /// A directory of the batch's own for the jobs' summaries and messages.
    private let scratch: String
    private let state = Mutex(State())

    private struct State {
        /// The running job's process id.
        var child: Int32?
        var stopped = false
    }

    init(executable: String, jobs: [BatchFile.Job]) throws {
        self.executable = executable
        self.jobs = jobs
        var template = Array((FileManager.default.temporaryDirectory.path + "/vtrecord-batch-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw UsageError("cannot make a temporary directory: \(SystemError.reason(errno))")
        }
        scratch = String(cString: made)
    }

    /// Passes the signal to the running job (it runs in a process group of its own, so a
    /// signal from the terminal reaches only this process) and starts no further job.
    func stop(signal: Int32) {
        state.withLock { state in
            state.stopped = true
            // `child` is cleared as soon as the job has ended.
            if let child = state.child { kill(child, signal) }
        }
    }

    /// Removes the scratch directory and what is in it.
    func cleanUp() {
        try? FileManager.default.removeItem(atPath: scratch)
    }

    func run() -> [Result] {
        defer { cleanUp() }
        return jobs.map(run)
    }

    private func run(_ job: BatchFile.Job) -> Result {
        let notRun = Result(job: job, status: Result.notRun, summary: nil, error: nil)
        if state.withLock({ $0.stopped }) { return notRun }
        writeToStandardError("vtrecord: job \(job.number)/\(jobs.count) (\(job.name)) started")
        let temporary = job.summaryPath == nil ? "\(scratch)/\(job.number).json" : nil
        let summaryPath = job.summaryPath ?? temporary
        // A summary file the job names may be left from before: it counts only if the job wrote it.
        let before = summaryPath.flatMap(Self.identity)
        let errorFile = "\(scratch)/\(job.number).err"

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = job.arguments + (temporary.map { ["--json-summary", $0] } ?? [])
        // Standard output is the batch's own (--json); a job has nothing to say there.
        process.standardOutput = FileHandle.nullDevice
        // The job's messages go to our standard error as they come, and into a file from
        // which its last error line is quoted in the result.
        let tee = Pipe()
        process.standardError = tee
        // Without the file the job's last error line is not quoted; its messages still show.
        let log = (try? systemCall("open") { open(errorFile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) })
            .map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
        let copied = DispatchSemaphore(value: 0)
        let copier = Thread {
            let reader = tee.fileHandleForReading
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                FileHandle.standardError.write(data)
                log?.write(data)
            }
            copied.signal()
        }
        do {
            // Checked again under the lock: a signal between the first check and the start
            // must not let the job run.
            let started = try state.withLock { state in
                guard !state.stopped else { return false }
                try process.run()
                state.child = process.processIdentifier
                return true
            }
            guard started else { return notRun }
        } catch {
            return Result(job: job, status: ExitStatus.failure.rawValue, summary: nil,
                          error: "cannot start \(executable): \(error.localizedDescription)")
        }
        copier.start()
        process.waitUntilExit()
        state.withLock { $0.child = nil }
        try? tee.fileHandleForWriting.close()
        copied.wait()
        try? log?.close()

        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        let written = summaryPath.map { path in Self.identity(path) != nil && Self.identity(path) != before } ?? false
        let summary = written ? summaryPath.flatMap { try? Data(contentsOf: URL(fileURLWithPath: $0)) }
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] } : nil
        let lastLine = (try? String(contentsOfFile: errorFile, encoding: .utf8))?
            .split(separator: "\n").last { $0.contains("error:") }
            .map { String($0.replacingOccurrences(of: "vtrecord: error: ", with: "")) }
        return Result(job: job, status: status, summary: summary, error: status == 0 ? nil : lastLine)
    }

    /// What tells one version of a file from another: inode and modification time.
    private static func identity(_ path: String) -> [Int]? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return [Int(info.st_ino), info.st_mtim.tv_sec, info.st_mtim.tv_nsec, Int(info.st_size)]
    }
}
