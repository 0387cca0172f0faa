import CAVFormat
import Synchronization
import VTCore

/// What ends a network call that would otherwise wait for ever: libavformat asks its
/// interrupt callback while it waits to connect, for a server's answer or for room to write,
/// and gives up when it says so. It says so when the output is told to stop (the recording
/// ends) or when the call has outlived its deadline (a server that never answers, a receiver
/// that stopped reading).
public final class NetworkInterrupt: Sendable {
    private let stopped = Atomic<Bool>(false)
    /// CLOCK_MONOTONIC nanoseconds after which the call in progress gives up; 0 for none.
    private let deadline = Atomic<Int64>(0)
    /// CLOCK_MONOTONIC nanoseconds after which every call gives up, whatever its own deadline
    /// (the time left to a stream at the end of a recording); 0 for none.
    private let lastDeadline = Atomic<Int64>(0)
    /// The milliseconds `endBy` gave, for the error that says so.
    private let lastAllowance = Atomic<Int64>(0)

    public init() {}

    /// Ends the call in progress and every later one. Safe from any thread.
    public func stop() { stopped.store(true, ordering: .releasing) }

    public var isStopped: Bool { stopped.load(ordering: .acquiring) }

    /// The calls from now on give up `seconds` from now.
    func giveUp(after seconds: Double) {
        deadline.store(MonotonicClock.nanoseconds() + Int64(seconds * 1e9), ordering: .releasing)
    }

    /// Every call from now on gives up `seconds` from now at the latest, and after that at once.
    public func endBy(_ seconds: Double) {
        lastAllowance.store(Int64(seconds * 1000), ordering: .relaxed)
        lastDeadline.store(MonotonicClock.nanoseconds() + Int64(seconds * 1e9), ordering: .releasing)
    }

    /// Calls from now on may take as long as they take (until a stop or `endBy`).
    func noDeadline() { deadline.store(0, ordering: .releasing) }

    /// The seconds `endBy` gave when they have run out (the recording ended and the call did
    /// not finish in the time left to it), else nil.
    var endAllowanceSpent: Double? {
        let last = lastDeadline.load(ordering: .acquiring)
        guard last != 0, MonotonicClock.nanoseconds() >= last else { return nil }
        return Double(lastAllowance.load(ordering: .relaxed)) / 1000
    }

    /// Whether the call in progress should give up now.
    var isDue: Bool {
        if isStopped { return true }
        let now = MonotonicClock.nanoseconds()
        let last = lastDeadline.load(ordering: .acquiring)
        if last != 0 && now >= last { return true }
        let due = deadline.load(ordering: .acquiring)
        return due != 0 && now >= due
    }

    /// libavformat's form of it; valid while this object lives.
    var callback: AVIOInterruptCB {
        AVIOInterruptCB(callback: Self.check, opaque: Unmanaged.passUnretained(self).toOpaque())
    }

    private static let check: @convention(c) (UnsafeMutableRawPointer?) -> Int32 = { opaque in
        guard let opaque else { return 0 }
        return Unmanaged<NetworkInterrupt>.fromOpaque(opaque).takeUnretainedValue().isDue ? 1 : 0
    }
}
