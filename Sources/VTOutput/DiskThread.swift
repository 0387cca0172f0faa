import Dispatch
import Foundation
import Synchronization

/// `vtrecord-disk`: the one thread that does the file work that waits for the disk, so that the
/// threads writing a recording never do: starting the writeback of what was appended
/// (`OutputFile.startWriteback`), finishing a segment the recording is done with and deleting
/// one it no longer keeps (`FileFinisher`). Work runs in the order it was handed over. The
/// thread starts with the first work and then waits for more for as long as the process runs.
///
/// Written small rather than on a Dispatch queue so that the thread has its name, as every
/// other thread of a recording does.
final class DiskThread: Sendable {
    static let shared = DiskThread()

    private let pending = Mutex<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    private init() {
        Thread.start(named: "vtrecord-disk") { [self] in
            while true {
                ready.wait()
                let work = pending.withLock { $0.removeFirst() }
                work()
            }
        }
    }

    /// Runs `work` after what was handed over before it; returns at once.
    func run(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
        ready.signal()
    }

    /// Waits until everything handed over so far has run.
    func waitForAll() {
        let done = DispatchSemaphore(value: 0)
        run { done.signal() }
        done.wait()
    }
}
