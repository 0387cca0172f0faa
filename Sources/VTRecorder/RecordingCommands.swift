import Dispatch
import Foundation
import Synchronization
import VTCore
import VTEvents
import VTOutput

/// What can be asked of a running recording — an event, the end of open events, a stop, a
/// still, the status — whoever asks: a signal, the control socket or HTTP. Each request is
/// checked and carried out here, once, and each way in only turns its own words into a call
/// and the answer into its own (a log line, a line of JSON, an HTTP response).
///
/// It is made before the recording, since a signal or a request can come while a camera
/// opens; what the answers need of the recording is attached as the recording is made, and a
/// request before then is refused with words that say so (a stop is kept, by `StopRequest`).
public final class RecordingCommands: Sendable {
    /// A request refused, in one line the asker is shown.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }

        public static let noEvents = Refusal("there is no --events to keep a clip in")
        public static let notStarted = Refusal("the recording has not started yet")
    }

    /// How the recording makes its stills: the taker, and a still made into a JPEG; or why it
    /// has none.
    public enum Stills: Sendable {
        case taker(StillTaker, jpeg: @Sendable (StillSource) throws -> [UInt8])
        case none(why: String)
    }

    private struct Parts {
        var recording: RecordingControl?
        var stills: Stills?
        var summary: (@Sendable (RecordingResult) -> RecordingSummary)?
    }

    private let parts = Mutex(Parts())
    private let events: EventInbox?
    private let stopRequest: StopRequest
    private let stopping: @Sendable (_ who: String, _ againAborts: Bool) -> Void
    /// How long a still is waited for: the next picture, a JPEG and a write.
    public let stillWait: Double
    /// Whether `snapshot(to:)` may replace an existing file (`--overwrite`).
    private let overwrite: Bool

    /// `events`: where event requests go, nil without `--events`. `stopping` is told who
    /// asked for a stop, and whether asking again aborts (a signal sent twice), to say so and
    /// to give publishing its time to end, before the stop.
    public init(events: EventInbox?, stop: StopRequest, overwrite: Bool, stillWait: Double = 5,
                stopping: @escaping @Sendable (_ who: String, _ againAborts: Bool) -> Void) {
        self.events = events
        self.stopRequest = stop
        self.overwrite = overwrite
        self.stillWait = stillWait
        self.stopping = stopping
    }

    public func attach(_ recording: RecordingControl) { parts.withLock { $0.recording = recording } }
    public func attach(stills: Stills) { parts.withLock { $0.stills = stills } }
    /// The summary of the recording's figures so far, which `status()` answers with.
    public func attach(summary: @escaping @Sendable (RecordingResult) -> RecordingSummary) {
        parts.withLock { $0.summary = summary }
    }

    /// An event now: a moment (`duration` 0), `duration` seconds, or (nil) until `endEvents`.
    public func event(label: String?, duration: Double?, from source: EventRequest.Source) throws(Refusal) {
        guard let events else { throw .noEvents }
        if let label, !EventRequest.isValidLabel(label) {
            throw Refusal("label \(label): letters, digits, '.', '_' and '-' only, at most 64")
        }
        if let duration, !(duration >= 0 && duration <= 86_400) {
            throw Refusal("duration \(duration): give seconds from 0 to 86400")
        }
        events.add(EventRequest(source: source, kind: .begin(label: label, duration: duration)))
    }

    /// Ends the events `source` began to last until ended.
    public func endEvents(from source: EventRequest.Source) throws(Refusal) {
        guard let events else { throw .noEvents }
        events.add(EventRequest(source: source, kind: .end))
    }

    /// A clean stop, asked for by `who` (SIGINT, POST /stop, the control socket); a second
    /// request `againAborts` the recording (the stop signals').
    public func stop(by who: String, againAborts: Bool = false) {
        stopping(who, againAborts)
        stopRequest.stopCleanly()
    }

    /// The recording's figures so far; nil before it has started. The capture counters are
    /// read now (the rest is at most half a second old): a browser that measures its delay
    /// against the camera's frame count needs the count of this moment.
    public func status() -> RecordingSummary? {
        let (recording, summary) = parts.withLock { ($0.recording, $0.summary) }
        guard let summary else { return nil }
        var result = recording?.liveResult
            ?? RecordingResult(statistics: RecordingStatistics(), stopReason: .recording, encoder: "none", settings: nil, error: nil)
        if let recording, result.stopReason == .recording {
            result.statistics.framesCaptured = recording.framesCaptured
            result.statistics.droppedQueue = recording.droppedAtQueue
        }
        return summary(result)
    }

    /// A JPEG of the next picture, answered once: with the JPEG, with why there is none, or,
    /// when no picture comes within `stillWait` (the recording ended), with that.
    public func still(_ answer: @escaping @Sendable (Result<[UInt8], any Error>) -> Void) {
        let stills = parts.withLock { $0.stills }
        guard let stills else { return answer(.failure(Refusal.notStarted)) }
        switch stills {
        case .none(let why): answer(.failure(Refusal(why)))
        case .taker(let taker, let jpeg):
            let made = Mutex<[UInt8]>([])
            let answered = Atomic<Bool>(false)
            taker.request({ still in
                let bytes = try jpeg(still)
                made.withLock { $0 = bytes }
            }, answer: { error in
                guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
                answer(error.map { .failure($0) } ?? .success(made.withLock { $0 }))
            })
            DispatchQueue.global().asyncAfter(deadline: .now() + stillWait) { [stillWait] in
                guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
                answer(.failure(Self.noPicture(within: stillWait)))
            }
        }
    }

    public func still() async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            still { continuation.resume(with: $0) }
        }
    }

    /// A still of the next picture written whole to `path` (a hidden file renamed over it).
    /// An existing file is kept, as -o keeps one, unless the recording was started with
    /// --overwrite. Returns the file's name as the recording's files are named.
    public func snapshot(to path: String) throws -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { throw OutputError.isDirectory(path: path) }
            if !overwrite { throw Self.exists(path) }
        }
        let done = DispatchSemaphore(value: 0)
        let made = Mutex<[UInt8]>([])
        let failure = Mutex<(any Error)?>(nil)
        still { result in
            switch result {
            case .success(let bytes): made.withLock { $0 = bytes }
            case .failure(let error): failure.withLock { $0 = error }
            }
            done.signal()
        }
        // Waited for here too: the answer's own time-out runs on Dispatch's shared threads,
        // which a busy process may keep waiting; the socket's thread does not wait on them.
        guard done.wait(timeout: .now() + stillWait) == .success else { throw Self.noPicture(within: stillWait) }
        if let error = failure.withLock({ $0 }) { throw error }
        let bytes = made.withLock { $0 }
        // Without --overwrite, a file that appeared meanwhile is kept too (link(2) refuses it).
        if let error = Self.write(path: path, bytes: bytes, replace: overwrite) {
            if case .exists = error { throw Self.exists(path) }
            throw error
        }
        return OutputFileRegistry.key(path)
    }

    private static func write(path: String, bytes: [UInt8], replace: Bool) -> OutputError? {
        do throws(OutputError) {
            try writeFileAtomically(path: path, bytes: bytes, replace: replace)
            return nil
        } catch {
            return error
        }
    }

    private static func noPicture(within seconds: Double) -> Refusal {
        Refusal("no picture came within \(String(format: "%g", seconds)) s")
    }

    private static func exists(_ path: String) -> Refusal {
        Refusal("\(path) already exists: name a new file, or start the recording with --overwrite")
    }
}
