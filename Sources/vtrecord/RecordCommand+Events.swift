import Foundation
import Logging
import Synchronization
import VTCore
import VTDecoding
import VTEvents
import VTOutput
import VTRecorder

/// What the control socket's `status` reads, filled in as the recording is made.
final class ControlBoard: Sendable {
    /// Writes a still of the next picture to a path; the error, if it could not.
    typealias Snapshot = @Sendable (String) -> (any Error)?

    private struct Parts {
        var recording: RecordingControl?
        var events: (@Sendable () -> EventReport)?
        var snapshot: Snapshot?
        var retention: RetentionJanitor?
    }

    private let parts = Mutex(Parts())

    func attach(_ recording: RecordingControl) { parts.withLock { $0.recording = recording } }
    func attach(events: (@Sendable () -> EventReport)?) { parts.withLock { $0.events = events } }
    func attach(snapshot: @escaping Snapshot) { parts.withLock { $0.snapshot = snapshot } }
    func attach(retention: RetentionJanitor?) { parts.withLock { $0.retention = retention } }
    var snapshot: Snapshot? { parts.withLock { $0.snapshot } }

    var current: (recording: RecordingControl?, events: EventReport?, retention: RetentionReport?) {
        let (recording, events, retention) = parts.withLock { ($0.recording, $0.events, $0.retention) }
        return (recording, events?(), retention?.report)
    }
}

/// The control socket's `status` answer.
struct ControlStatus: Encodable {
    var framesCaptured: Int
    var droppedQueue: Int
    var events: EventReport?
    var retention: RetentionReport?

    enum CodingKeys: String, CodingKey {
        case framesCaptured = "frames_captured", droppedQueue = "dropped_queue", events, retention
    }
}

extension Record {
    /// `--events`: the clips, or nil without it. Clips number on from those a previous run left.
    static func eventClips(_ options: EventOptions, container: Container?, writerSettings: AssetWriter.Settings,
                           device: String, preset: String?, inbox: EventInbox, logger: Logging.Logger,
                           quiet: Bool) throws -> EventClips? {
        guard let template = try options.template(), let container else { return nil }
        // A folder that is not there (or not writable) would fail only at the first event:
        // refused now, before anything is written, as -o into it is.
        if let directory = template.fixedDirectory, access(directory, W_OK) != 0 {
            throw OutputError.cannotOpen(path: template.text, errno: errno)
        }
        var settings = writerSettings
        settings.container = container
        if container == .h264 { settings.audio = nil }
        let fileSettings = settings
        let clipSettings = EventClips.Settings(
            template: template, preRoll: options.preRollSeconds, postRoll: options.postRollSeconds,
            maxClip: options.maxClip?.seconds, heldBytesLimit: EventOptions.heldBytesLimit, device: device,
            preset: preset, firstNumber: template.nextNumber(device: device, preset: preset),
            audioSampleRate: fileSettings.audio?.sampleRate, onEvent: options.onEvent)
        return EventClips(settings: clipSettings, inbox: inbox,
                          open: { path throws(OutputError) in try AssetWriter.open(path: path, settings: fileSettings) },
                          say: { text in logger.warning("\(text)") },
                          closed: { clip in
                              if !quiet {
                                  logger.notice("event clip \(clip.file): \(clip.frames) frames, \(String(format: "%.1f", clip.preRoll)) s before the event")
                              }
                          })
    }

    /// One control socket line's answer: a line of JSON.
    static func answer(_ line: String, inbox: EventInbox, hasEvents: Bool, board: ControlBoard) -> String {
        let command: ControlCommand
        do throws(ControlCommand.ParseError) {
            command = try ControlCommand.parse(line)
        } catch {
            return failure(error.description)
        }
        switch command {
        case .event(let label, let duration):
            guard hasEvents else { return failure("there is no --events to keep a clip in") }
            inbox.add(EventRequest(source: .control, kind: .begin(label: label, duration: duration)))
            return #"{"ok":true}"#
        case .eventEnd:
            guard hasEvents else { return failure("there is no --events to keep a clip in") }
            inbox.add(EventRequest(source: .control, kind: .end))
            return #"{"ok":true}"#
        case .snapshot(let path):
            guard let snapshot = board.snapshot else { return failure("the recording has not started yet") }
            if let error = snapshot(path) {
                return failure((error as? any ReportableError)?.description ?? "\(error)")
            }
            let file = (try? JSONEncoder().encode(OutputFileRegistry.key(path))).map { String(decoding: $0, as: UTF8.self) }
            return #"{"ok":true,"file":"# + (file ?? "null") + "}"
        case .status:
            let (recording, events, retention) = board.current
            let status = ControlStatus(framesCaptured: recording?.framesCaptured ?? 0,
                                       droppedQueue: recording?.droppedAtQueue ?? 0, events: events, retention: retention)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(status) else { return failure("the status could not be written") }
            return #"{"ok":true,"status":"# + String(decoding: data, as: UTF8.self) + "}"
        }
    }

    /// How long `snapshot PATH` waits for its still: the next picture, a JPEG and a write.
    static let snapshotWait = 5.0

    /// The control socket's `snapshot PATH`: a still of the next picture, written whole (a
    /// hidden file renamed over PATH), waited for at most `snapshotWait`. An existing file is
    /// kept, as -o keeps one, unless the recording was started with --overwrite.
    static func snapshotOnRequest(_ stills: StillTaker, fullRange: Bool, overwrite: Bool) -> ControlBoard.Snapshot {
        { path in
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
                if isDirectory.boolValue { return OutputError.isDirectory(path: path) }
                if !overwrite { return SnapshotExists(path: path) }
            }
            let done = DispatchSemaphore(value: 0)
            let outcome = Mutex<(any Error)?>(nil)
            stills.request({ still in
                let bytes = try stillJPEG(still, fullRange: fullRange)
                do throws(OutputError) {
                    // Without --overwrite, a file that appeared meanwhile is kept too (link(2) refuses it).
                    try writeFileAtomically(path: path, bytes: bytes, replace: overwrite)
                } catch .exists {
                    throw SnapshotExists(path: path)
                }
            }, answer: { error in
                outcome.withLock { $0 = error }
                done.signal()
            })
            guard done.wait(timeout: .now() + .milliseconds(Int(snapshotWait * 1000))) == .success else {
                return StillTimedOut()
            }
            return outcome.withLock { $0 }
        }
    }

    /// `snapshot PATH` while an H.264 camera's stream is copied as it came.
    struct NoStillOfH264: Error, CustomStringConvertible {
        var description: String {
            "this recording keeps the camera's H.264 as it comes, with no picture to take a still of: "
                + "watch /live.mp4 with --http, or take stills from a file it wrote (vtrecord thumbnail)"
        }
    }

    /// `snapshot PATH` onto a file that exists, without --overwrite.
    struct SnapshotExists: Error, CustomStringConvertible {
        var path: String
        var description: String { "\(path) already exists: name a new file, or start the recording with --overwrite" }
    }

    struct StillTimedOut: Error, CustomStringConvertible {
        var description: String { "no picture came within \(Int(Record.snapshotWait)) s" }
    }

    private static func failure(_ text: String) -> String {
        let encoded = (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        return #"{"ok":false,"error":"# + encoded + "}"
    }
}
