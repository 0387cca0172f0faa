import Foundation
import Synchronization
import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// `--on-event CMD`: a shell command run for each clip once it is finished whole, for uploads
/// and notifications, with the clip in its environment:
///
///     VTRECORD_CLIP_FILE, VTRECORD_CLIP_START, VTRECORD_CLIP_END (seconds on the recording's
///     clock), VTRECORD_CLIP_TRIGGER, VTRECORD_CLIP_LABEL, VTRECORD_CLIP_FRAMES,
///     VTRECORD_CLIP_PRE_ROLL, VTRECORD_CLIP_CONTINUES (1 for a clip cut at --max-clip)
///
/// The recording never waits for one: each runs from a thread of its own (at most
/// `mostAtOnce`, the rest wait their turn), in a process group of its own so a Ctrl-C meant
/// for vtrecord does not cut an upload short, with the signals vtrecord blocks unblocked and
/// SIGPIPE back to its default. A command that fails is said with its status and counted.
/// Commands still running when vtrecord ends go on by themselves.
final class ClipHook: Sendable {
    let command: String
    private let turns = DispatchSemaphore(value: 0)
    private let say: @Sendable (String) -> Void
    private let counts = Mutex((run: 0, failed: 0))

    static let mostAtOnce = 4

    init(command: String, say: @escaping @Sendable (String) -> Void) {
        self.command = command
        self.say = say
        for _ in 0..<Self.mostAtOnce { turns.signal() }
    }

    /// Commands started, and of those the ones that exited other than 0 or could not start.
    var figures: (run: Int, failed: Int) { counts.withLock { $0 } }

    func run(for clip: EventReport.Clip) {
        let environment = ProcessInfo.processInfo.environment.merging([
            "VTRECORD_CLIP_FILE": clip.file,
            "VTRECORD_CLIP_START": String(format: "%.3f", clip.start),
            "VTRECORD_CLIP_END": clip.end.map { String(format: "%.3f", $0) } ?? "",
            "VTRECORD_CLIP_TRIGGER": clip.trigger.rawValue,
            "VTRECORD_CLIP_LABEL": clip.label ?? "",
            "VTRECORD_CLIP_FRAMES": "\(clip.frames)",
            "VTRECORD_CLIP_PRE_ROLL": String(format: "%.3f", clip.preRoll),
            "VTRECORD_CLIP_CONTINUES": clip.continues ? "1" : "0",
        ]) { _, new in new }
        Thread.start(named: "vtrecord-hook") { [self] in
            turns.wait()
            defer { turns.signal() }
            counts.withLock { $0.run += 1 }
            let status = Self.spawnAndWait(["/bin/sh", "-c", command], environment: environment)
            guard status != 0 else { return }
            counts.withLock { $0.failed += 1 }
            let what = status < 0 ? "could not be started: \(SystemError.reason(-status))"
                : status > 128 ? "was ended by signal \(status - 128)" : "exited with \(status)"
            say("--on-event for \(clip.file) \(what) (the recording goes on)")
        }
    }

    /// The command's exit status, 128 + a signal that ended it, or -errno when it could not start.
    private static func spawnAndWait(_ arguments: [String], environment: [String: String]) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], nil, &attributes, argv, envp)
        guard spawned == 0 else { return -spawned }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -errno }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which are macros Swift cannot import.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
