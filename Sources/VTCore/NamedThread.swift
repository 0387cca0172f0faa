import CLinux
import Foundation
import Logging

extension Thread {
    /// Starts `body` on a new thread that the system knows by `name` (/proc/PID/task/TID/comm,
    /// `top -H`, `ps -L`, gdb): at most 15 bytes, the kernel's limit.
    ///
    /// The thread names itself with prctl(PR_SET_NAME) before `body` runs. Foundation's own
    /// `name` does not always reach the kernel on Linux: with three CPU-bound programs beside
    /// a ThreadSanitizer build, the audio and capture threads ran at their raised priority
    /// still named "vtrecord", one run in three.
    @discardableResult
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        precondition(name.utf8.count <= 15, "thread name \(name) is longer than the kernel keeps")
        let thread = Thread {
            // The kernel cuts a longer name (the precondition rules that out) and fails only
            // for a bad address; a thread without its name still works, so say so and go on.
            if vt_name_this_thread(name) != 0 {
                let reason = String(cString: strerror(errno))
                Logger(label: "vtrecord").warning("cannot name thread \(name): \(reason)")
            }
            body()
        }
        thread.name = name
        thread.start()
        return thread
    }
}
