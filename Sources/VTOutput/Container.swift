import VTCore

/// The kind of file a recording is written as: a raw H.264 stream, or a container that carries
/// each frame's time.
public enum Container: String, CaseIterable, Sendable, Codable {
    /// Raw H.264 (Annex B): no times, no index; the default.
    case h264
    /// MP4: fragmented while recording, finalized into a regular MP4 at a clean end.
    case mp4
    /// Matroska: a cluster per keyframe, Cues and Duration at a clean end.
    case mkv
    /// MPEG transport stream: PAT/PMT before every keyframe, PCR, 90 kHz times.
    case ts

    /// The extensions each container is chosen by, the first its usual one.
    public var extensions: [String] {
        switch self {
        case .h264: ["h264", "264"]
        case .mp4: ["mp4", "m4v"]
        case .mkv: ["mkv"]
        case .ts: ["ts"]
        }
    }

    /// Whether each frame carries its own presentation time in the file.
    public var carriesTime: Bool { self != .h264 }

    /// Every extension vtrecord writes, for messages: ".h264, .264, .mp4, .m4v, .mkv, .ts".
    public static var extensionList: String {
        allCases.flatMap(\.extensions).map { "." + $0 }.joined(separator: ", ")
    }

    /// The container an output name asks for by its extension (case-insensitive); nil when
    /// the name has none of the extensions vtrecord writes.
    public init?(pathExtension: String) {
        let lower = pathExtension.lowercased()
        guard let match = Self.allCases.first(where: { $0.extensions.contains(lower) }) else { return nil }
        self = match
    }

    /// The one place that decides the container: `--container` when given, else the
    /// extension of `path` (standard output and a name without an extension: raw H.264).
    /// An extension that names no container vtrecord writes is refused.
    /// `option` names where the path was given, for the message.
    public static func choose(explicit: Container?, path: String, option: String = "-o") throws(UsageError) -> Container {
        if let explicit { return explicit }
        guard path != "-", let ext = pathExtension(of: path) else { return .h264 }
        guard let container = Container(pathExtension: ext) else {
            throw UsageError("cannot write .\(ext) files (\(option) \(path)): name the output \(extensionList), "
                             + "or choose the format with --container \(allCases.map(\.rawValue).joined(separator: "|"))")
        }
        return container
    }

    /// The extension of the last path component, without the dot; nil when there is none.
    static func pathExtension(of path: String) -> String? {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        return ext.isEmpty ? nil : String(ext)
    }
}
