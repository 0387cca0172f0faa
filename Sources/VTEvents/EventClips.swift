import Foundation
import VTCore
import VTOutput

/// `--events`: clips of what happened around each event, with the moments before it. The
/// encoder's packets pass through here on the encoder thread: they are held for the pre-roll
/// (`PreRollBuffer`), and while a clip is open they go to it too, through the clip thread
/// (`ClipThread`), so nothing here waits for a disk.
///
/// A clip starts with the newest keyframe at or before the event's time less the pre-roll and
/// ends before the first keyframe at or after the event's end plus the post-roll; that
/// keyframe is asked of the encoder, so the end is exact. An event during a clip moves its
/// end. `--max-clip` cuts a long one at a keyframe (asked for too) and goes on in a new file.
/// A clip never starts before the last one ended, so clips neither overlap nor leave a gap:
/// where one ends the next may begin, with the same keyframe.
///
/// To the recorder this is an output like any other: standing alone (`--events` without a
/// continuous `-o`), it is the recording, and its figures are what passed through it.
public final class EventClips: MediaOutput {
    public struct Settings: Sendable {
        public var template: OutputTemplate
        public var preRoll: Double
        public var postRoll: Double
        /// A clip longer than this goes on in a new file, from a keyframe.
        public var maxClip: Double?
        /// The most the pre-roll holds, in bytes of encoded pictures and sound.
        public var heldBytesLimit: Int
        public var device: String
        public var preset: String?
        /// `{n}` of the first clip (after those a previous run left).
        public var firstNumber: Int
        /// The sound's rate, when the recording has sound.
        public var audioSampleRate: Int?
        /// `--on-event`: a shell command run for each clip finished (`ClipHook`).
        public var onEvent: String?

        public init(template: OutputTemplate, preRoll: Double, postRoll: Double, maxClip: Double?,
                    heldBytesLimit: Int, device: String, preset: String?, firstNumber: Int, audioSampleRate: Int?,
                    onEvent: String? = nil) {
            self.onEvent = onEvent
            self.template = template
            self.preRoll = preRoll
            self.postRoll = postRoll
            self.maxClip = maxClip
            self.heldBytesLimit = heldBytesLimit
            self.device = device
            self.preset = preset
            self.firstNumber = firstNumber
            self.audioSampleRate = audioSampleRate
        }
    }

    /// The clip being written.
    private struct Clip {
        let index: Int
        /// Its first keyframe's position in the pre-roll.
        let position: Int
        let start: MediaTime
        /// The latest end its events with an end ask for (their time, plus the post-roll).
        var timedEnd: MediaTime?
        /// The sources whose events last until they are ended (`event … open`, motion going on).
        var lasting: Set<EventRequest.Source>
        let split: MediaTime?
        let source: EventRequest.Source
        let label: String?

        /// Where the clip ends: the first keyframe at or after it does not belong to it. nil
        /// while an event lasts.
        var end: MediaTime? { lasting.isEmpty ? timedEnd : nil }
    }

    public let settings: Settings
    private let hook: ClipHook?
    private let inbox: EventInbox
    private var held: PreRollBuffer
    private let clipThread: ClipThread
    private var clip: Clip?
    /// The clip that ended and still takes its sound, up to this sample.
    private var closing: (index: Int, until: Int64)?
    /// Where the last clip ended: the position in the pre-roll of the keyframe after it.
    private var lastEnd: Int?
    /// The keyframe time last asked of the encoder, so each is asked once.
    private var keyFrameAsked: MediaTime?
    private var format: VideoFormatDescription?
    /// The newest picture written that carried its capture time: how a request's moment maps
    /// onto the stream's times.
    private var clock: (pts: MediaTime, captureTime: Int64)?
    /// The newest picture given to the encoder: the moment of a request for a source without
    /// a capture clock.
    private var newestSubmitted: MediaTime?
    /// Requests that came before any keyframe was held: they wait for one.
    private var waiting: [EventRequest] = []
    private var received = OutputStatistics()
    private let now: @Sendable () -> Date
    private var ended = false

    /// `open` makes each clip's file (on the clip thread); `say` gets one-line notices;
    /// `closed` is told of each clip finished whole, on the clip thread.
    public init(settings: Settings, inbox: EventInbox, now: @escaping @Sendable () -> Date = Date.init,
                open: @escaping @Sendable (_ path: String) throws(OutputError) -> any MediaOutput,
                say: @escaping @Sendable (String) -> Void,
                closed: @escaping @Sendable (EventReport.Clip) -> Void = { _ in }) {
        self.settings = settings
        self.inbox = inbox
        self.now = now
        held = PreRollBuffer(seconds: settings.preRoll, byteLimit: settings.heldBytesLimit)
        let hook = settings.onEvent.map { ClipHook(command: $0, say: say) }
        self.hook = hook
        // A clip may fall behind by a whole pre-roll and as much again before it is cut.
        clipThread = ClipThread(backlogLimit: 2 * settings.heldBytesLimit + 16_000_000, open: open, say: say,
                            closed: { clip in
                                closed(clip)
                                hook?.run(for: clip)
                            })
        clipThread.withReport { $0.heldBytesLimit = settings.heldBytesLimit }
    }

    deinit { if !ended { clipThread.abandon() } }

    /// What the clips are and did so far.
    public var report: EventReport { liveReport() }

    /// The report, for any thread (the control socket's `status`).
    public var liveReport: @Sendable () -> EventReport {
        { [clipThread, hook] in
            var report = clipThread.withReport { $0 }
            if let figures = hook?.figures {
                report.hooksRun = figures.run
                report.hooksFailed = figures.failed
            }
            return report
        }
    }

    public var paths: [String] { clipThread.withReport { $0.clips.map(\.file) } }

    /// "events: recording clip-3.mp4, 3 kept, held 4.2 MB" or "events: waiting, held 4.2 MB".
    public var statusNotes: [String] {
        let (count, current) = clipThread.withReport { report in
            (report.clips.count, report.clips.last.flatMap { $0.state == .recording ? $0.file : nil })
        }
        let what = current.map { "recording \(URL(fileURLWithPath: $0).lastPathComponent)" } ?? "waiting"
        return ["events: \(what), \(count) clip\(count == 1 ? "" : "s"), held \(formatByteSize(Int64(held.bytes)))"]
    }
    public var statistics: OutputStatistics { received }
    public var unusedFile: String? { nil }

    public func requiresKeyFrame(for token: FrameToken, at pts: MediaTime) -> Bool {
        newestSubmitted = pts
        guard let clip else { return false }
        // The nearer of its end and its cut (asked once each), without an array for every picture.
        let boundary = switch (clip.end, clip.split) {
        case let (end?, split?): min(end, split)
        case let (end, split): end ?? split
        }
        guard let boundary, pts >= boundary, keyFrameAsked != boundary else { return false }
        keyFrameAsked = boundary
        return true
    }

    public func writeHeader(_ format: VideoFormatDescription) throws(OutputError) {
        self.format = format
    }

    public func write(_ frame: EncodedFrame) throws(OutputError) {
        guard let format else { preconditionFailure("a frame before its header") }
        received.frames += 1
        received.bytes += Int64(frame.data.count)
        if frame.isKeyFrame { received.keyFrames += 1 }
        if let captured = frame.captureTime { clock = (frame.pts, captured) }
        let position = held.end
        held.append(.frame(frame, format))
        // A clip going on takes the picture; one opened now takes everything held, this included.
        if clip != nil { route(frame, format, at: position) }
        takeRequests()
        clipThread.withReport { report in
            report.heldBytes = held.bytes
            report.heldBytesPeak = held.peakBytes
            report.gopsDroppedForBytes = held.gopsDroppedForBytes
        }
    }

    public func writeAudio(_ packet: EncodedAudioPacket) throws(OutputError) {
        held.append(.sound(packet))
        route(packet)
    }

    /// Hands a picture to the clip, first ending it before a keyframe at its end, or cutting it
    /// there at `--max-clip` and going on in the next.
    private func route(_ frame: EncodedFrame, _ format: VideoFormatDescription, at position: Int) {
        guard let current = clip else { return }
        if frame.isKeyFrame && position != current.position {
            if let split = current.split, frame.pts >= split, current.end.map({ frame.pts < $0 }) ?? true {
                close(current, at: frame.pts, position: position)
                clip = open(at: position, start: frame.pts, timedEnd: current.timedEnd, lasting: current.lasting,
                            source: current.source, label: current.label, preRoll: 0, continues: true)
            } else if let end = current.end, frame.pts >= end {
                close(current, at: frame.pts, position: position)
                return
            }
        }
        clipThread.send(.packet(clip: clip!.index, .frame(frame, format)))
    }

    /// Hands sound to the clip that ended while the sound before its end is still coming, then
    /// to the clip going on, from its first picture's time.
    private func route(_ packet: EncodedAudioPacket) {
        if let closing {
            if packet.pts < closing.until {
                clipThread.send(.packet(clip: closing.index, .sound(packet)))
                return
            }
            clipThread.send(.close(clip: closing.index))
            self.closing = nil
        }
        if let clip, packet.pts >= samples(clip.start) {
            clipThread.send(.packet(clip: clip.index, .sound(packet)))
        }
    }

    public func finish(keepEmpty: Bool) throws(OutputError) {
        guard !ended else { return }
        ended = true
        if let closing { clipThread.send(.close(clip: closing.index)) }
        if let clip {
            clipThread.send(.close(clip: clip.index))
            clipThread.withReport { $0.clips[clip.index].end = held.newest.map { $0.seconds } }
        }
        clipThread.finish()
    }

    public func abandon() {
        guard !ended else { return }
        ended = true
        clipThread.abandon()
    }

    // MARK: clips

    /// Takes the requests that came since the last picture: a clip opened now is sent what
    /// is held from its keyframe on, the picture just written included.
    private func takeRequests() {
        let fresh = inbox.take()
        if !fresh.isEmpty { clipThread.withReport { $0.triggers += fresh.count } }
        let requests = waiting + fresh
        waiting = []
        for request in requests {
            let moment = time(of: request)
            switch request.kind {
            case .begin(let label, let duration):
                let end = duration.map { moment + seconds($0 + settings.postRoll) }
                let lasting: Set<EventRequest.Source> = duration == nil ? [request.source] : []
                if var current = clip {
                    // The clip goes on to the later end, and while any event lasts.
                    if let end { current.timedEnd = max(end, current.timedEnd ?? end) }
                    current.lasting.formUnion(lasting)
                    clip = current
                } else if let start = held.start(for: moment, notBefore: lastEnd) {
                    let preRoll = max(0, moment.seconds - start.pts.seconds)
                    clip = open(at: start.position, start: start.pts, timedEnd: end, lasting: lasting,
                                source: request.source, label: label, preRoll: preRoll, continues: false)
                    replay(from: start.position)
                } else {
                    waiting.append(request)
                }
            case .end:
                // Ends what this source began to last; the clip goes on for the post-roll.
                guard var current = clip, current.lasting.remove(request.source) != nil else { continue }
                let end = moment + seconds(settings.postRoll)
                current.timedEnd = max(end, current.timedEnd ?? end)
                clip = current
            }
        }
    }

    /// Opens a clip that starts with the keyframe at `position` in the pre-roll.
    private func open(at position: Int, start: MediaTime, timedEnd: MediaTime?, lasting: Set<EventRequest.Source>,
                       source: EventRequest.Source, label: String?, preRoll: Double, continues: Bool) -> Clip {
        let index = clipThread.withReport { $0.clips.count }
        let ago = max(0, (newestSubmitted ?? start).seconds - start.seconds)
        let path = settings.template.expand(.init(date: now().addingTimeInterval(-ago), device: settings.device,
                                                  preset: settings.preset, segment: settings.firstNumber + index,
                                                  label: label ?? source.rawValue))
        clipThread.withReport { report in
            report.clips.append(EventReport.Clip(file: path, state: .recording, trigger: source, label: label,
                                                 start: start.seconds, end: nil,
                                                 preRoll: (preRoll * 1000).rounded() / 1000, continues: continues))
        }
        clipThread.send(.open(clip: index, path: path))
        return Clip(index: index, position: position, start: start, timedEnd: timedEnd, lasting: lasting,
                    split: settings.maxClip.map { start + seconds($0) }, source: source, label: label)
    }

    /// Sends the clip just opened what is held from `position` on, in the order it came, as if
    /// it came now: a pre-roll longer than `--max-clip` is cut as a live clip would be.
    private func replay(from position: Int) {
        guard let first = clip else { return }
        // Sound from before the clip's start went to the clip before, if any, as it came.
        let from = samples(first.start)
        var at = position
        for packet in held.packets(from: position) {
            switch packet {
            case .frame(let frame, let format): route(frame, format, at: at)
            case .sound(let sound): if sound.pts >= from { route(sound) }
            }
            at += 1
        }
    }

    /// Ends `current` before the keyframe at `position` (presentation time `end`); with
    /// sound, it takes the sound up to that time first.
    private func close(_ current: Clip, at end: MediaTime, position: Int) {
        clipThread.withReport { $0.clips[current.index].end = end.seconds }
        if let closing { clipThread.send(.close(clip: closing.index)) }
        if settings.audioSampleRate != nil {
            closing = (current.index, samples(end))
        } else {
            closing = nil
            clipThread.send(.close(clip: current.index))
        }
        clip = nil
        lastEnd = position
    }

    /// A request's moment on the stream's clock: through the capture time of the newest
    /// picture written, or, for a source without one, the newest picture given to the encoder.
    private func time(of request: EventRequest) -> MediaTime {
        if let clock {
            return clock.pts + seconds(Double(request.time - clock.captureTime) / 1e9)
        }
        return newestSubmitted ?? held.newest ?? .zero
    }

    private func seconds(_ value: Double) -> MediaTime {
        MediaTime(seconds: value, timescale: 1_000_000)
    }

    private func samples(_ time: MediaTime) -> Int64 {
        guard let rate = settings.audioSampleRate else { return 0 }
        return time.ticks(since: .zero, timescale: Int32(rate))
    }
}
