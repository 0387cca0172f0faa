import Foundation
import Testing
import VTH264

/// Whether a recording ends at its last complete access unit, as vtrecord promises after a
/// signal, an abort or a failed write: every NAL unit whole, and the last picture decoding.
///
/// A cut inside a slice cannot be seen in the NAL structure (the start codes are all there),
/// but the decoder sees it: ffmpeg reports "error while decoding MB" for a slice that runs out
/// of data. So the file must decode without a single error, and into as many pictures as it
/// has access units, which proves the last one decoded too.
struct StreamIntegrity {
    /// Access units (pictures) in the file.
    var pictures: Int { accessUnitStarts.count }
    /// Where each access unit starts, in bytes.
    let accessUnitStarts: [Int]
    /// What is wrong; empty when the file ends at its last complete access unit.
    let problems: [String]

    /// NAL unit types an x264 or VA-API stream from vtrecord may hold: slices, IDR slices,
    /// SEI, SPS, PPS, access unit delimiters and filler data.
    static let expectedTypes: Set<UInt8> = [1, 5, 6, 7, 8, 9, 12]

    /// Parses and decodes `path`.
    static func examine(_ path: String) throws -> StreamIntegrity {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let structure = parse(bytes, name: path)
        guard structure.problems.isEmpty else { return structure }
        var problems: [String] = []
        let decode = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-f", "null", "-"])
        if decode.status != 0 || !decode.stderr.isEmpty {
            problems.append("\(path) does not decode cleanly: \(decode.stderr.prefix(500))")
        }
        let frames = try Tools.run("ffmpeg", ["-nostdin", "-v", "error", "-i", path, "-fps_mode", "passthrough",
                                              "-f", "framemd5", "-"])
        let decoded = frames.stdoutText.split(separator: "\n").filter { !$0.hasPrefix("#") }.count
        if decoded != structure.pictures {
            problems.append("\(path): \(structure.pictures) access units, \(decoded) decoded pictures")
        }
        return StreamIntegrity(accessUnitStarts: structure.accessUnitStarts, problems: problems)
    }

    /// `examine`, with every problem recorded as an issue.
    @discardableResult
    static func check(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> StreamIntegrity {
        let integrity = try examine(path)
        for problem in integrity.problems { Issue.record("\(problem)", sourceLocation: sourceLocation) }
        return integrity
    }

    /// The NAL structure: a start code and an SPS first, every NAL unit a known type with more
    /// than its header, and a slice last (a file never ends inside the parameter sets that open
    /// a keyframe).
    static func parse(_ bytes: [UInt8], name: String) -> StreamIntegrity {
        guard bytes.starts(with: AnnexB.startCode) else {
            return StreamIntegrity(accessUnitStarts: [], problems: ["\(name) does not start with a 4-byte start code"])
        }
        var starts: [Int] = []
        var previousWasSlice = false
        for (index, range) in AnnexB.nalUnitRanges(in: bytes).enumerated() {
            let header = bytes[range.lowerBound]
            let type = header & 0x1F
            guard header & 0x80 == 0, expectedTypes.contains(type), range.count > 1 else {
                return StreamIntegrity(accessUnitStarts: starts, problems: [
                    "\(name): NAL unit \(index) at byte \(range.lowerBound) is damaged "
                        + "(header 0x\(String(header, radix: 16)), \(range.count) bytes)",
                ])
            }
            if index == 0 && type != 7 {
                return StreamIntegrity(accessUnitStarts: [], problems: ["\(name) starts with NAL unit type \(type), not an SPS"])
            }
            let isSlice = type == 1 || type == 5
            // first_mb_in_slice = 0 is the ue(v) "1": the first slice of a picture.
            let firstSlice = isSlice && bytes[range.lowerBound + 1] & 0x80 != 0
            if index == 0 || (previousWasSlice && (!isSlice || firstSlice)) {
                starts.append(range.lowerBound - AnnexB.startCode.count)
            }
            previousWasSlice = isSlice
        }
        guard previousWasSlice else {
            return StreamIntegrity(accessUnitStarts: starts, problems: [
                "\(name) ends after NAL units that open a picture, without the picture",
            ])
        }
        return StreamIntegrity(accessUnitStarts: starts, problems: [])
    }

    /// True when the file at `path` is the one at `reference` cut at one of its access unit
    /// boundaries (or whole): what a write error must leave of a stream that would otherwise
    /// have been `reference`.
    static func isPrefixAtAccessUnitBoundary(_ path: String, of reference: String) throws -> Bool {
        let cut = try Data(contentsOf: URL(fileURLWithPath: path))
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: reference)))
        guard cut.count <= whole.count, cut.elementsEqual(whole.prefix(cut.count)) else { return false }
        let structure = parse(whole, name: reference)
        return structure.problems.isEmpty
            && (cut.count == whole.count || structure.accessUnitStarts.contains(cut.count))
    }
}
