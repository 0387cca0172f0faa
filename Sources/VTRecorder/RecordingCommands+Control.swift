import Foundation
import VTCore
import VTEvents

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

extension RecordingCommands {
    /// One control socket line carried out; the answer is a line of JSON.
    public func answer(_ line: String) -> String {
        do {
            switch try ControlCommand.parse(line) {
            case .event(let label, let duration):
                try event(label: label, duration: duration, from: .control)
                return #"{"ok":true}"#
            case .eventEnd:
                try endEvents(from: .control)
                return #"{"ok":true}"#
            case .stop:
                stop(by: "the control socket's stop")
                return #"{"ok":true}"#
            case .snapshot(let path):
                let file = try snapshot(to: path)
                return #"{"ok":true,"file":"# + Self.json(file) + "}"
            case .status:
                // Before the recording has started: nothing captured yet.
                let summary = status()
                let status = ControlStatus(framesCaptured: summary?.framesCaptured ?? 0, droppedQueue: summary?.droppedQueue ?? 0,
                                           events: summary?.events, retention: summary?.retention)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                guard let data = try? encoder.encode(status) else { throw Refusal("the status could not be written") }
                return #"{"ok":true,"status":"# + String(decoding: data, as: UTF8.self) + "}"
            }
        } catch {
            let text = (error as? any ReportableError)?.description ?? "\(error)"
            return #"{"ok":false,"error":"# + Self.json(text) + "}"
        }
    }

    private static func json(_ text: String) -> String {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
    }
}
