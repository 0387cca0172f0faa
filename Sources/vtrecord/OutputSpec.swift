import Foundation
import VTCore
import VTOutput

/// One `-o` after the first: a file (or '-') or a network destination, with the options that
/// apply to it alone, written before it in brackets as FFmpeg's tee muxer takes them:
/// `-o '[segment-time=10m,max-files=6]cam-{n}.mkv'`. The recording (the first `-o`) takes
/// the command's own options instead.
struct OutputSpec: Equatable {
    enum Target: Equatable {
        /// A path or template, or "-".
        case file(String)
        case network(NetworkDestination)
    }

    var target: Target
    /// `container=`: for a file whose extension does not say.
    var container: Container?
    var segmentTime: Double?
    var segmentSize: Int64?
    var maxFiles: Int?

    /// The keys a bracket takes.
    static let keys = ["container", "segment-time", "segment-size", "max-files"]

    /// How it is shown: the path as given, or the URL with its secrets masked.
    var name: String {
        switch target {
        case .file(let path): path
        case .network(let destination): destination.description
        }
    }

    var segmentPolicy: SegmentPolicy? {
        guard segmentTime != nil || segmentSize != nil else { return nil }
        return SegmentPolicy(duration: segmentTime, maxBytes: segmentSize)
    }

    /// A network output with no options of its own (the recording, when it is published).
    init(destination: NetworkDestination) {
        target = .network(destination)
    }

    /// Reads one `-o` value; the error says what is wrong with it.
    init(parsing text: String) throws(UsageError) {
        var rest = Substring(text)
        var options: [(String, String)] = []
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else {
                throw UsageError("-o \(NetworkDestination.looksLikeURL(text) ? "…" : text): a '[' of output options needs its ']'")
            }
            for item in rest[rest.index(after: rest.startIndex)..<close].split(separator: ",") {
                let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, !pair[1].isEmpty else {
                    throw UsageError("-o: output option '\(item)' needs a value: write key=value (keys: \(Self.keys.joined(separator: ", ")))")
                }
                options.append((pair[0], pair[1]))
            }
            rest = rest[rest.index(after: close)...]
        }
        let location = String(rest)
        guard !location.isEmpty else { throw UsageError("-o \(text) names no file or URL after its options") }
        target = NetworkDestination.looksLikeURL(location) ? .network(try NetworkDestination(parsing: location)) : .file(location)
        for (key, value) in options { try set(key, value) }
        try check()
    }

    private mutating func set(_ key: String, _ value: String) throws(UsageError) {
        let shown = "-o \(name): \(key)=\(value)"
        switch key {
        case "container":
            guard let kind = Container(rawValue: value) else {
                throw UsageError("\(shown) is not a container: \(Container.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            container = kind
        case "segment-time":
            guard let seconds = try? DurationArgument.parse(value).seconds else {
                throw UsageError("\(shown) is not a time such as 60s or 10m")
            }
            segmentTime = seconds
        case "segment-size":
            guard let bytes = DecimalQuantity(argument: value)?.value else {
                throw UsageError("\(shown) is not a size such as 500M or 2G")
            }
            segmentSize = bytes
        case "max-files":
            guard let count = Int(value), count >= 1 else { throw UsageError("\(shown): keep at least 1 file") }
            maxFiles = count
        default:
            throw UsageError("-o \(name): no output option '\(key)' (keys: \(Self.keys.joined(separator: ", ")))")
        }
    }

    /// What cannot go together in one output.
    private func check() throws(UsageError) {
        switch target {
        case .network(let destination):
            if container != nil || segmentPolicy != nil || maxFiles != nil {
                throw UsageError("-o \(name): container, segments and max-files apply to files; "
                                 + "\(destination.scheme.rawValue):// always carries \(destination.scheme.streamKind)")
            }
        case .file(let path):
            _ = try Container.choose(explicit: container, path: path)
            if maxFiles != nil && segmentPolicy == nil {
                throw UsageError("-o \(name): max-files applies to segments: add segment-time or segment-size")
            }
            guard segmentPolicy != nil else { return }
            let template: OutputTemplate
            do throws(OutputTemplateError) {
                template = try OutputTemplate(path)
            } catch {
                throw UsageError(error.description)
            }
            if template.isStandardOutput {
                throw UsageError("-o \(name): segments are files, not standard output")
            }
            if !template.numbersSegments {
                throw UsageError("-o \(name): segments need {n} in the name, e.g. '\(OutputOptions.numbered(path))'")
            }
        }
    }

    /// Whether the output can carry sound of `codec`; a raw H.264 file takes the picture alone.
    func carries(_ codec: AudioCodec) -> Bool {
        switch target {
        case .network(let destination): return destination.scheme.carries(codec)
        case .file:
            switch fileContainer {
            case .h264, .mkv: return true
            case .mp4, .ts: return codec != .pcm
            }
        }
    }

    /// The container of a file output.
    var fileContainer: Container {
        guard case .file(let path) = target else { return .ts }
        return (try? Container.choose(explicit: container, path: path)) ?? .h264
    }
}
