import Foundation

/// How an MP4 file is laid out at its top level, as `inspect` reports it: a fragmented file
/// (its `moov` announces fragments with `mvex`, which follow as `moof` boxes) has not been
/// finalized; a regular one has one complete `moov`.
public struct MP4Layout: Sendable, Equatable {
    /// The top-level box types in order.
    public var boxes: [String] = []
    /// `moof` boxes at the top level.
    public var fragments = 0
    /// The (first) `moov` holds `mvex`: the samples are in fragments.
    public var announcesFragments = false
    /// Bytes at the end that do not make a whole box (a file cut short).
    public var trailingBytes = 0

    public var isFinalized: Bool { boxes.contains("moov") && !announcesFragments && fragments == 0 }

    /// Reads the box headers of `bytes` (a whole file), and the children of the first `moov`.
    public init(bytes: [UInt8]) {
        self.init(length: bytes.count) { at, count in Array(bytes[at..<min(at + count, bytes.count)]) }
    }

    /// Reads the box headers of the file at `path` without reading the samples between them;
    /// nil when it cannot be read.
    public init?(path: String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let length = try? handle.seekToEnd() else { return nil }
        self.init(length: Int(length)) { at, count in
            (try? handle.seek(toOffset: UInt64(at))).flatMap { _ in try? handle.read(upToCount: count) }.map { [UInt8]($0) } ?? []
        }
    }

    /// Walks the top-level boxes of a file of `length` bytes, reading `count` bytes at an offset
    /// with `read`.
    private init(length: Int, read: (_ at: Int, _ count: Int) -> [UInt8]) {
        var at = 0
        while at + 8 <= length {
            let header = read(at, 16)
            guard header.count >= 8 else { break }
            let size = Self.size(header, length - at)
            guard size >= 8, at + size <= length else { break }
            let type = String(decoding: header[4..<8], as: UTF8.self)
            boxes.append(type)
            if type == "moof" { fragments += 1 }
            if type == "moov" && boxes.filter({ $0 == "moov" }).count == 1 {
                let moov = read(at, size)
                var child = 8
                while child + 8 <= moov.count {
                    let childSize = Self.size(Array(moov[child..<min(child + 16, moov.count)]), moov.count - child)
                    guard childSize >= 8 else { break }
                    if moov[(child + 4)..<(child + 8)].elementsEqual("mvex".utf8) { announcesFragments = true }
                    child += childSize
                }
            }
            at += size
        }
        trailingBytes = length - at
    }

    /// The size of the box whose header starts `header`, with `available` bytes from its start
    /// to the end of what holds it.
    private static func size(_ header: [UInt8], _ available: Int) -> Int {
        let small = header[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard small == 1, header.count >= 16, available >= 16 else { return small }
        return header[8..<16].reduce(0) { $0 << 8 | Int($1) }
    }
}
