import Foundation
import Synchronization
import VTCore
import VTOutput

/// Writes event clips on a thread of its own (`vtrecord-clips`), so that the encoder thread
/// only hands it packets: a pre-roll of many seconds reaches the disk at once without the
/// camera, the encoder or the recording waiting for it (Motion drops frames while it writes
/// its pre-capture; this is why vtrecord does not).
///
/// Clips are written one after the other, in the order they were asked for; the packets are
/// the encoder's own arrays, shared with the pre-roll, so the backlog costs no copy. It is
/// bounded all the same (`backlogLimit`): a clip whose file falls that far behind loses the
/// rest of its packets, said and counted, and ends where it was cut.
final class ClipThread: Sendable {
    typealias Open = @Sendable (_ path: String) throws(OutputError) -> any MediaOutput

    enum Command: Sendable {
        case open(clip: Int, path: String)
        case packet(clip: Int, ClipPacket)
        case close(clip: Int)
    }

    private struct State: ~Copyable {
        var commands: [Command] = []
        var head = 0
        var backlogBytes = 0
        /// Clips that lost a packet to the backlog bound: the rest of theirs goes too.
        var cut: Set<Int> = []
        var finishing = false
        var abandoning = false
        var report = EventReport()
    }

    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)
    private let open: Open
    private let say: @Sendable (String) -> Void
    private let closed: @Sendable (EventReport.Clip) -> Void
    let backlogLimit: Int

    /// `closed` is called on the clip thread for each clip finished whole.
    init(backlogLimit: Int, open: @escaping Open, say: @escaping @Sendable (String) -> Void,
         closed: @escaping @Sendable (EventReport.Clip) -> Void) {
        self.backlogLimit = backlogLimit
        self.open = open
        self.say = say
        self.closed = closed
        state = Mutex(State())
        Thread.start(named: "vtrecord-clips") { [self] in
            run()
            ended.signal()
        }
    }

    /// The report as the clip thread keeps it (clips' files, frames, bytes, states).
    func withReport<T>(_ body: (inout EventReport) -> T) -> T {
        state.withLock { body(&$0.report) }
    }

    /// Called by the encoder thread; never waits for the clip thread.
    func send(_ command: Command) {
        let dropped: Int? = state.withLock { state in
            if case .packet(let clip, let packet) = command {
                guard !state.cut.contains(clip) else {
                    state.report.packetsDropped += 1
                    return nil
                }
                guard state.backlogBytes + packet.byteCount <= backlogLimit else {
                    state.cut.insert(clip)
                    state.report.packetsDropped += 1
                    return clip
                }
                state.backlogBytes += packet.byteCount
            }
            state.commands.append(command)
            return nil
        }
        wake.signal()
        if let dropped {
            let file = withReport { $0.clips[dropped].file }
            say("\(file): the clip's file fell more than \(formatDecimalQuantity(Int64(backlogLimit))) bytes behind; "
                + "it ends here (the recording goes on)")
        }
    }

    /// Writes everything sent, then ends the thread; returns when it has.
    func finish() {
        state.withLock { $0.finishing = true }
        wake.signal()
        ended.wait()
        ended.signal()
    }

    /// Ends at once: the clip being written is left as far as it got.
    func abandon() {
        state.withLock { $0.abandoning = true }
        wake.signal()
        ended.wait()
        ended.signal()
    }

    // MARK: the clip thread

    private struct Writing {
        var output: any MediaOutput
        var format: VideoFormatDescription?
        var frames = 0
    }

    private func run() {
        var writing: [Int: Writing] = [:]
        while true {
            let next: (command: Command?, finishing: Bool, abandoning: Bool) = state.withLock { state in
                guard state.head < state.commands.count, !state.abandoning else {
                    return (nil, state.finishing, state.abandoning)
                }
                let command = state.commands[state.head]
                // The slot lets its packet go now, not when the list is next compacted: up to 256
                // written pictures would stay alive meanwhile (megabytes at 1080p).
                state.commands[state.head] = .close(clip: -1)
                state.head += 1
                if case .packet(_, let packet) = command { state.backlogBytes -= packet.byteCount }
                if state.head > 256 && state.head * 2 > state.commands.count {
                    state.commands.removeFirst(state.head)
                    state.head = 0
                }
                return (command, state.finishing, false)
            }
            guard let command = next.command else {
                if next.abandoning {
                    for (clip, entry) in writing {
                        entry.output.abandon()
                        update(clip, entry.output, state: .failed, error: "the recording ended with an error")
                    }
                    return
                }
                if next.finishing { return }
                wake.wait()
                continue
            }
            switch command {
            case .open(let clip, let path):
                do throws(OutputError) {
                    writing[clip] = Writing(output: try open(path))
                } catch {
                    fail(clip, error)
                }
            case .packet(let clip, let packet):
                guard var entry = writing[clip] else { continue }
                do throws(OutputError) {
                    switch packet {
                    case .frame(let frame, let format):
                        if format != entry.format {
                            try entry.output.writeHeader(format)
                            entry.format = format
                        }
                        try entry.output.write(frame)
                        entry.frames += 1
                    case .sound(let sound):
                        // A container takes sound only once it has a picture.
                        guard entry.frames > 0 else { continue }
                        try entry.output.writeAudio(sound)
                    }
                    writing[clip] = entry
                    update(clip, entry.output, state: .recording)
                } catch {
                    entry.output.abandon()
                    writing[clip] = nil
                    update(clip, entry.output, state: .failed, error: error.description)
                    fail(clip, error)
                }
            case .close(let clip):
                guard let entry = writing.removeValue(forKey: clip) else { continue }
                do throws(OutputError) {
                    try entry.output.finish(keepEmpty: false)
                    let cut = state.withLock { $0.cut.contains(clip) }
                    update(clip, entry.output, state: cut ? .failed : .finished,
                           error: cut ? "cut short: its file fell behind" : nil)
                    if !cut { closed(withReport { $0.clips[clip] }) }
                } catch {
                    update(clip, entry.output, state: .failed, error: error.description)
                    fail(clip, error)
                }
            }
        }
    }

    private func update(_ clip: Int, _ output: any MediaOutput, state clipState: EventReport.Clip.State,
                        error: String? = nil) {
        let statistics = output.statistics
        withReport { report in
            report.clips[clip].frames = statistics.frames
            report.clips[clip].bytes = statistics.bytes
            report.clips[clip].state = clipState
            if let error { report.clips[clip].error = error }
        }
    }

    private func fail(_ clip: Int, _ error: OutputError) {
        withReport { report in
            report.clips[clip].state = .failed
            report.clips[clip].error = error.description
        }
        say("\(error.description); the clip ends here (the recording goes on)")
    }
}
