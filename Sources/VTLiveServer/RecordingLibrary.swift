import Foundation
import Synchronization

/// The files the recording's templates made (`-o` and `--events`), as `/recordings` lists and
/// serves them. Only a file whose name the template's pattern matches, directly in the
/// template's folder, is reachable: a request names a kind and a file name, never a path, so
/// nothing outside those folders can be asked for.
public final class RecordingLibrary: Sendable {
    public struct Source: Sendable {
        /// "recording" or "clip": the listing's `kind`, and the URL's folder (`recordings`, `clips`).
        public var kind: String
        public var directory: String
        /// A regular expression a file's whole name matches. Kept as text: `Regex` is not
        /// `Sendable` (its generic output type keeps it from being declared so).
        public let pattern: String

        /// Throws if `pattern` is not a regular expression.
        public init(kind: String, directory: String, pattern: String) throws {
            _ = try Regex(pattern)
            self.kind = kind
            self.directory = directory
            self.pattern = pattern
        }

        /// Which of `names` the template made.
        func matching(_ names: [String]) -> [String] {
            // The pattern compiled in init; compiled again, it cannot fail.
            guard let regex = try? Regex(pattern) else { return [] }
            return names.filter { (try? regex.wholeMatch(in: $0)) != nil }
        }

        /// The URL path segment for the kind.
        var folder: String { kind == "clip" ? "clips" : "recordings" }
    }

    public struct Entry: Sendable, Encodable {
        public var name: String
        public var kind: String
        public var bytes: Int64
        public var modified: Date
        public var open: Bool
        public var url: String
        public var thumbnail: String?
        /// The file on disk (not listed).
        public var path: String

        enum CodingKeys: String, CodingKey { case name, kind, bytes, modified, open, url, thumbnail }
    }

    /// A still of a file, as `thumbnail` makes it; nil when it has none (no picture yet).
    public typealias Thumbnailer = @Sendable (String) -> [UInt8]?

    public let sources: [Source]
    private let thumbnailer: Thumbnailer?
    /// Whether the recording is writing to a file now.
    private let isOpen: @Sendable (String) -> Bool
    /// Thumbnails made, by path, with the size and time of the file they were made of.
    private let thumbnails = Mutex<[String: (bytes: Int64, modified: Date, jpeg: [UInt8])]>([:])

    public init(sources: [Source], thumbnailer: Thumbnailer?, isOpen: @escaping @Sendable (String) -> Bool) {
        self.sources = sources
        self.thumbnailer = thumbnailer
        self.isOpen = isOpen
    }

    /// Every file the templates made, newest first.
    public func list() -> [Entry] {
        var entries: [Entry] = []
        // Two templates in one folder with the same pattern list each file once.
        var seen = Set<String>()
        for source in sources {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: source.directory) else { continue }
            for name in source.matching(names) {
                let path = (source.directory as NSString).appendingPathComponent(name)
                guard seen.insert(path).inserted, let entry = entry(source, name: name, path: path) else { continue }
                entries.append(entry)
            }
        }
        return entries.sorted { ($0.modified, $0.name) > ($1.modified, $1.name) }
    }

    /// The file `/recordings/FOLDER/NAME` names, if the templates made it.
    public func find(folder: String, name: String) -> Entry? {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { return nil }
        for source in sources where source.folder == folder && !source.matching([name]).isEmpty {
            let path = (source.directory as NSString).appendingPathComponent(name)
            if let entry = entry(source, name: name, path: path) { return entry }
        }
        return nil
    }

    private func entry(_ source: Source, name: String, path: String) -> Entry? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let modified = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
        let escaped = name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name
        let url = "recordings/\(source.folder)/\(escaped)"
        return Entry(name: name, kind: source.kind, bytes: Int64(info.st_size), modified: modified,
                     open: isOpen(path), url: url,
                     thumbnail: thumbnailer == nil ? nil : url + "?thumbnail", path: path)
    }

    /// A thumbnail of the file, made once for each size and time it has.
    public func thumbnail(of entry: Entry) -> [UInt8]? {
        if let cached = thumbnails.withLock({ $0[entry.path] }),
           cached.bytes == entry.bytes, cached.modified == entry.modified {
            return cached.jpeg
        }
        guard let jpeg = thumbnailer?(entry.path) else { return nil }
        thumbnails.withLock { cache in
            // A few hundred small stills at most; the oldest entries go first past that.
            if cache.count >= 512 { cache.removeAll() }
            cache[entry.path] = (entry.bytes, entry.modified, jpeg)
        }
        return jpeg
    }
}

/// An HTTP `Range` header resolved against a file's length (RFC 9110, one range only).
public enum ByteRange: Equatable, Sendable {
    /// No Range header (or one that is not bytes, which is ignored): the whole file.
    case whole
    /// The bytes `lower ..< upper`.
    case part(Range<Int64>)
    /// A range that the file cannot satisfy (416).
    case unsatisfiable

    public init(header: String?, length: Int64) {
        guard let header else { self = .whole; return }
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes=") else { self = .whole; return }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        // Several ranges would need a multipart answer; the first is served, as many servers do.
        let first = spec.split(separator: ",", maxSplits: 1).first.map(String.init) ?? ""
        let bounds = first.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else { self = .unsatisfiable; return }
        let startText = bounds[0].trimmingCharacters(in: .whitespaces)
        let endText = bounds[1].trimmingCharacters(in: .whitespaces)
        let digits = { (s: String) in !s.isEmpty && s.count <= 18 && s.allSatisfy(\.isASCII) && s.allSatisfy(\.isNumber) }
        if startText.isEmpty {
            // The last N bytes.
            guard digits(endText), let suffix = Int64(endText), suffix > 0, length > 0 else { self = .unsatisfiable; return }
            self = .part(max(0, length - suffix) ..< length)
            return
        }
        guard digits(startText), let start = Int64(startText), start < length else { self = .unsatisfiable; return }
        if endText.isEmpty {
            self = .part(start ..< length)
            return
        }
        guard digits(endText), let end = Int64(endText), end >= start else { self = .unsatisfiable; return }
        self = .part(start ..< min(end + 1, length))
    }
}
