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
        var at = 0
        while at + 8 <= bytes.count {
            let size = Self.size(bytes, at)
            guard size >= 8, at + size <= bytes.count else { break }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            boxes.append(type)
            if type == "moof" { fragments += 1 }
            if type == "moov" && boxes.filter({ $0 == "moov" }).count == 1 {
                var child = at + 8
                while child + 8 <= at + size {
                    let childSize = Self.size(bytes, child)
                    guard childSize >= 8 else { break }
                    if bytes[(child + 4)..<(child + 8)].elementsEqual("mvex".utf8) { announcesFragments = true }
                    child += childSize
                }
            }
            at += size
        }
        trailingBytes = bytes.count - at
    }

    private static func size(_ bytes: [UInt8], _ at: Int) -> Int {
        let small = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
        guard small == 1, at + 16 <= bytes.count else { return small }
        return bytes[(at + 8)..<(at + 16)].reduce(0) { $0 << 8 | Int($1) }
    }
}
