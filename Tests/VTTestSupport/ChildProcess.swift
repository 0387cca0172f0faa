import Foundation
import Synchronization

/// A program run by a test, with its output collected as it comes, so a test can wait for a
/// line a still-running program prints (and then start a second one against it) and a program
/// that hangs is stopped instead of stalling the whole test run.
public final class ChildProcess {
    /// What a finished program left behind.
    public struct Result: Sendable {
        public var status: Int32
        public var standardOutput: Data
        public var standardError: String
        /// True when the program had to be stopped because it outlived its time limit.
        public var timedOut: Bool
        /// The signal that ended the program (a crash, or the stop after a time-out); nil when
        /// it exited, and then `status` is its exit status.
        public var signal: Int32?

        public init(status: Int32, standardOutput: Data, standardError: String, timedOut: Bool, signal: Int32?) {
            self.status = status
            self.standardOutput = standardOutput
            self.standardError = standardError
            self.timedOut = timedOut
            self.signal = signal
        }

        public var standardOutputText: String { String(decoding: standardOutput, as: UTF8.self) }
        /// Both streams, for failure messages.
        public var transcript: String {
            "exit status \(status)\(timedOut ? " (timed out)" : "")\n"
                + "stdout: \(standardOutputText.prefix(4000))\nstderr: \(standardError.prefix(4000))"
        }
    }

    public let arguments: [String]
    private let process = Process()
    private let output = Collected()
    private let errors = Collected()
    private let readers = DispatchGroup()

    /// Bytes read from one pipe so far, and whether the pipe has reached its end.
    private final class Collected: Sendable {
        private let state = Mutex((data: Data(), ended: false))
        func append(_ more: Data) { state.withLock { $0.data.append(more) } }
        func end() { state.withLock { $0.ended = true } }
        var data: Data { state.withLock { $0.data } }
    }

    /// Starts `arguments[0]` (looked up on PATH unless it is a path) with exactly
    /// `environment` and nothing on standard input.
    ///
    /// `signalsUnblocked`: the program starts with no signal blocked. The threads tests run on
    /// (Swift's concurrency pool, and threads started from it) block nearly every signal, and
    /// Foundation's Process passes its caller's mask on, so without this a program that acts
    /// on SIGINT or SIGTERM through a handler (ffmpeg, nginx, Python) never gets them, and
    /// only SIGKILL ends it. vtrecord takes its signals with sigwait and needs no such help.
    public init(_ arguments: [String], environment: [String: String], signalsUnblocked: Bool = false) throws {
        precondition(!arguments.isEmpty, "a child process needs a program")
        self.arguments = arguments
        let program = arguments[0]
        process.executableURL = URL(fileURLWithPath: program.hasPrefix("/") ? program : "/usr/bin/env")
        process.arguments = program.hasPrefix("/") ? Array(arguments.dropFirst()) : arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let outputPipe = Pipe()
        let errorPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = errorPipe
        if signalsUnblocked {
            // Only around the spawn: the thread's own mask is back before it runs anything
            // else. A signal sent to the test process in that moment could be taken here.
            var none = sigset_t()
            var previous = sigset_t()
            sigemptyset(&none)
            pthread_sigmask(SIG_SETMASK, &none, &previous)
            defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
            try process.run()
        } else {
            try process.run()
        }
        // Drain both pipes while the program runs, so neither fills up and stalls it.
        // Threads of their own: a blocking read must not hold a worker of a shared pool.
        for (pipe, collected) in [(outputPipe, output), (errorPipe, errors)] {
            let handle = pipe.fileHandleForReading
            let readers = readers
            readers.enter()
            Thread.detachNewThread {
                while true {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    collected.append(chunk)
                }
                collected.end()
                readers.leave()
            }
        }
    }

    /// Runs a program to its end, stopping it after `timeout`.
    public static func run(_ arguments: [String], environment: [String: String],
                           timeout: Duration = .seconds(60)) throws -> Result {
        try ChildProcess(arguments, environment: environment).wait(timeout: timeout)
    }

    public var isRunning: Bool { process.isRunning }
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signal` (SIGINT, SIGTERM…) to the program.
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// The standard error the program has written so far.
    public var standardErrorSoFar: String { String(decoding: errors.data, as: UTF8.self) }

    /// Waits until the program has written `text` to standard error; false when it ended or
    /// `timeout` passed first.
    public func waitForStandardError(containing text: String, timeout: Duration = .seconds(10)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if standardErrorSoFar.contains(text) { return true }
            if !process.isRunning { return standardErrorSoFar.contains(text) }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    /// Waits for the program to end, stopping it (SIGTERM, then SIGKILL) after `timeout`.
    public func wait(timeout: Duration = .seconds(60)) -> Result {
        let deadline = ContinuousClock.now + timeout
        var timedOut = false
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                timedOut = true
                process.terminate()
                let grace = ContinuousClock.now + .seconds(2)
                while process.isRunning && ContinuousClock.now < grace {
                    Thread.sleep(forTimeInterval: 0.01)
                }
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                break
            }
            Thread.sleep(forTimeInterval: 0.002)
        }
        process.waitUntilExit()
        readers.wait()
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return Result(status: process.terminationStatus, standardOutput: output.data,
                      standardError: String(decoding: errors.data, as: UTF8.self), timedOut: timedOut,
                      signal: signal)
    }
}
