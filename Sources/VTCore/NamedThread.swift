import Foundation

extension Thread {
    /// Starts `body` on a new thread that the system knows by `name` (/proc/PID/task/TID/comm,
    /// `top -H`, `ps -L`, gdb): at most 15 bytes, the kernel's limit. Foundation on Linux gives
    /// a name to the system only when it is set from the thread itself, so it is set there.
    @discardableResult
    public static func start(named name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        precondition(name.utf8.count <= 15, "thread name \(name) is longer than the kernel keeps")
        let thread = Thread {
            Thread.current.name = name
            body()
        }
        thread.name = name
        thread.start()
        return thread
    }
}
