import Foundation

/// A box of an ISO BMFF file (MP4) as the tests read it back: type, where it starts, its payload.
public struct Box {
    public var type: String
    public var offset: Int
    public var headerSize: Int
    public var size: Int
    public var bytes: ArraySlice<UInt8>

    public var payload: ArraySlice<UInt8> { bytes[(offset + headerSize)..<(offset + size)] }

    public static func read(_ data: ArraySlice<UInt8>) -> [Box] {
        var boxes: [Box] = []
        var at = data.startIndex
        while at + 8 <= data.endIndex {
            var size = Int(u32(data, at))
            let type = String(decoding: data[(at + 4)..<(at + 8)], as: UTF8.self)
            var header = 8
            if size == 1 {
                size = Int(u64(data, at + 8))
                header = 16
            } else if size == 0 {
                size = data.endIndex - at
            }
            guard size >= header, at + size <= data.endIndex else { break }
            boxes.append(Box(type: type, offset: at, headerSize: header, size: size, bytes: data))
            at += size
        }
        return boxes
    }

    /// The box at a path of types below this one: `find("mdia", "minf", "stbl")`.
    public func find(_ path: String...) -> Box? {
        var box = self
        for type in path {
            let skip = ["meta"].contains(box.type) ? 4 : 0
            let children = Box.read(box.payload.dropFirst(skip))
            guard let next = children.first(where: { $0.type == type }) else { return nil }
            box = next
        }
        return box
    }

    public func children() -> [Box] { Box.read(payload) }

    /// The 32-bit field at `index` of a full box's payload (after version and flags).
    public func field(_ index: Int) -> UInt32 { Box.u32(bytes, offset + headerSize + 4 + 4 * index) }

    public var version: UInt8 { bytes[offset + headerSize] }

    public static func u32(_ data: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
        data[at..<(at + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    public static func u64(_ data: ArraySlice<UInt8>, _ at: Int) -> UInt64 {
        data[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// A box the tests looked for and did not find.
public struct MissingBox: Error, CustomStringConvertible {
    public var description: String
}

private func need<T>(_ value: T?, _ what: String = "box") throws -> T {
    guard let value else { throw MissingBox(description: "missing \(what)") }
    return value
}

/// The sample tables of a finished file's one track, read back.
public struct SampleTables {
    public var durations: [UInt32] = []
    public var offsets: [UInt32] = []
    public var sizes: [UInt32] = []
    public var sync: [UInt32]?
    public var chunkOffsets: [UInt64] = []
    public var samplesPerChunk: [(first: UInt32, count: UInt32)] = []
    public var editMediaTime: UInt32?
    public var timescale: UInt32 = 0

    /// The tables of a movie's first track.
    public init(movie: Box) throws {
        try self.init(track: need(movie.find("trak")))
    }

    /// The tables of one `trak`.
    public init(track trak: Box) throws {
        timescale = try need(trak.find("mdia", "mdhd")).field(2)
        if let elst = trak.find("edts", "elst") { editMediaTime = elst.field(2) }
        let stbl = try need(trak.find("mdia", "minf", "stbl"))
        let stts = try need(stbl.find("stts"))
        for i in 0..<Int(stts.field(0)) {
            durations += Array(repeating: stts.field(2 + 2 * i), count: Int(stts.field(1 + 2 * i)))
        }
        if let ctts = stbl.find("ctts") {
            for i in 0..<Int(ctts.field(0)) {
                offsets += Array(repeating: ctts.field(2 + 2 * i), count: Int(ctts.field(1 + 2 * i)))
            }
        } else {
            offsets = durations.map { _ in 0 }
        }
        let stsz = try need(stbl.find("stsz"))
        sizes = (0..<Int(stsz.field(1))).map { stsz.field(2 + $0) }
        if let stss = stbl.find("stss") { sync = (0..<Int(stss.field(0))).map { stss.field(1 + $0) } }
        if let stco = stbl.find("stco") {
            chunkOffsets = (0..<Int(stco.field(0))).map { UInt64(stco.field(1 + $0)) }
        } else if let co64 = stbl.find("co64") {
            chunkOffsets = (0..<Int(co64.field(0))).map {
                Box.u64(co64.bytes, co64.offset + co64.headerSize + 8 + 8 * $0)
            }
        }
        let stsc = try need(stbl.find("stsc"))
        samplesPerChunk = (0..<Int(stsc.field(0))).map { (stsc.field(1 + 3 * $0), stsc.field(2 + 3 * $0)) }
    }

    /// Each sample's file offset, from chunk offsets and samples per chunk.
    public var sampleOffsets: [UInt64] {
        var result: [UInt64] = []
        var sample = 0
        for (index, chunkOffset) in chunkOffsets.enumerated() {
            let chunk = UInt32(index + 1)
            let count = samplesPerChunk.last(where: { $0.first <= chunk })?.count ?? 0
            var at = chunkOffset
            for _ in 0..<count where sample < sizes.count {
                result.append(at)
                at += UInt64(sizes[sample])
                sample += 1
            }
        }
        return result
    }
}

extension Box {
    /// The top-level boxes of a file; a box cut short at the end is left out.
    public static func file(_ path: String) throws -> [Box] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return read(bytes[...])
    }

    /// Samples in the fragments (a `moof` followed by its whole `mdat`) of a fragmented file.
    public static func samplesInCompleteFragments(_ top: [Box]) -> Int {
        zip(top, top.dropFirst()).reduce(0) { total, pair in
            guard pair.0.type == "moof", pair.1.type == "mdat", let run = pair.0.find("traf", "trun") else { return total }
            return total + Int(run.field(0))
        }
    }
}

/// One entry of an edit list: a stretch of the movie (in its timescale) and the media time it
/// starts at, -1 for an empty edit.
public struct EditListEntry: Equatable, Sendable {
    public var duration: UInt64
    public var mediaTime: Int64

    public init(duration: UInt64, mediaTime: Int64) {
        self.duration = duration
        self.mediaTime = mediaTime
    }
}

extension Box {
    /// The children of one type, in order: the `trak`s of a `moov`, the `traf`s of a `moof`.
    public func children(_ type: String) -> [Box] { children().filter { $0.type == type } }

    /// The `trak` of a `moov`, or the `traf` of a `moof`, of track `id`.
    public func track(_ id: UInt32) -> Box? {
        children("trak").first { $0.find("tkhd").map(\.trackID) == id }
            ?? children("traf").first { $0.find("tfhd")?.field(0) == id }
    }

    /// A `tkhd`'s track ID (after its creation and modification times, 32 or 64 bits each).
    public var trackID: UInt32 { field(version == 1 ? 4 : 2) }

    /// The entries of a `trak`'s edit list; empty without one.
    public var editList: [EditListEntry] {
        guard let elst = find("edts", "elst") else { return [] }
        let wide = elst.version == 1
        var at = elst.offset + elst.headerSize + 8
        return (0..<Int(elst.field(0))).map { _ in
            defer { at += wide ? 20 : 12 }
            if wide {
                return EditListEntry(duration: Box.u64(elst.bytes, at), mediaTime: Int64(bitPattern: Box.u64(elst.bytes, at + 8)))
            }
            return EditListEntry(duration: UInt64(Box.u32(elst.bytes, at)),
                                 mediaTime: Int64(Int32(bitPattern: Box.u32(elst.bytes, at + 4))))
        }
    }

    /// Samples of track `id` in the complete fragments (a `moof` followed by its whole `mdat`).
    public static func samplesInCompleteFragments(_ top: [Box], track id: UInt32) -> Int {
        zip(top, top.dropFirst()).reduce(0) { total, pair in
            guard pair.0.type == "moof", pair.1.type == "mdat", let run = pair.0.track(id)?.find("trun") else { return total }
            return total + Int(run.field(0))
        }
    }
}
