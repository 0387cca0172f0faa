import VTCore

/// One line on the control socket: what can be asked of a running recording, which signals
/// and HTTP ask too (`RecordingCommands` carries each out).
///
///     event [LABEL [DURATION]]   an event now: a moment (as SIGUSR1), or lasting DURATION
///                                (10s, 1m), or `open` until event-end; LABEL '-' for none
///     event-end                  ends the events begun with `open`
///     snapshot PATH              a JPEG of the next picture, written whole to PATH
///     status                     the recording's figures and the events so far
///     stop                       finishes the recording, as SIGTERM does
public enum ControlCommand: Sendable, Equatable {
    case event(label: String?, duration: Double?)
    case eventEnd
    case snapshot(path: String)
    case status
    case stop

    /// Why a line is not a command, as the answer says it.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    public static let usage = "commands: event [LABEL [DURATION|open]], event-end, snapshot PATH, status, stop"

    public static func parse(_ line: String) throws(ParseError) -> ControlCommand {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard let name = words.first else { throw ParseError(description: "an empty line: \(usage)") }
        switch name {
        case "event":
            guard words.count <= 3 else { throw ParseError(description: "event takes a label and a duration at most") }
            var label: String?
            if words.count > 1 && words[1] != "-" {
                guard EventRequest.isValidLabel(words[1]) else {
                    throw ParseError(description: "label \(words[1]): letters, digits, '.', '_' and '-' only, at most 64")
                }
                label = words[1]
            }
            guard words.count == 3 else { return .event(label: label, duration: 0) }
            if words[2] == "open" { return .event(label: label, duration: nil) }
            guard let seconds = parseDuration(words[2]), seconds >= 0, seconds <= 86_400 else {
                throw ParseError(description: "duration \(words[2]): give a time such as 30s or 2m (at most a day), or open")
            }
            return .event(label: label, duration: seconds)
        case "snapshot":
            // The rest of the line is the path, spaces and all.
            let path = line.trimmingCharacters(in: .whitespaces).dropFirst("snapshot".count)
                .trimmingCharacters(in: .whitespaces)
            guard !path.isEmpty, path != "-" else { throw ParseError(description: "snapshot takes the path of a file to write") }
            return .snapshot(path: path)
        case "event-end", "status", "stop":
            guard words.count == 1 else { throw ParseError(description: "\(name) takes nothing more") }
            return name == "status" ? .status : name == "stop" ? .stop : .eventEnd
        default:
            throw ParseError(description: "unknown command \(name): \(usage)")
        }
    }
}
