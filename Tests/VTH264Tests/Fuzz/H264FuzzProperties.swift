import Foundation
import VTCore
@testable import VTH264

/// What must hold for any input to the H.264 readers, one function per reader: each returns
/// nil when the reader kept its promises, else what it broke. A trap inside a reader ends the
/// process, which the fuzz run's breadcrumb file and printed seed account for.
///
/// Public because the libFuzzer targets of `make fuzz` (Fuzz/) link this same file.
public enum H264FuzzProperties {
    /// Annex B splitting and the conversion to AVCC and back.
    public static func annexB(_ input: [UInt8]) -> String? {
        let ranges = AnnexB.nalUnitRanges(in: input)
        if let problem = checkRanges(ranges, in: input) { return problem }
        for range in ranges where input[range.upperBound - 1] == 0 {
            return "NAL unit \(range) ends in a zero byte, which belongs to the next start code"
        }
        let avcc = AVCC.fromAnnexB(input)
        let units = ranges.map { Array(input[$0]) }
        let avccRanges: [Range<Int>]
        do {
            avccRanges = try AVCC.nalUnitRanges(in: avcc, lengthSize: 4)
        } catch {
            return "AVCC.fromAnnexB wrote AVCC its own reader refuses: \(error)"
        }
        guard avccRanges.map({ Array(avcc[$0]) }) == units else {
            return "AVCC.fromAnnexB changed the NAL units"
        }
        var annexB: [UInt8] = []
        do {
            try withBytes(avcc) { (bytes) throws(BitstreamError) in
                try AnnexB.appendAccessUnit(avcc: bytes, nalUnitLengthSize: 4, parameterSets: [], to: &annexB)
            }
        } catch {
            return "appendAccessUnit refused the AVCC that fromAnnexB wrote: \(error)"
        }
        // A NAL unit may end in 00 00 03 00 … only if escaped, so a unit that holds a start
        // code of its own (it was not escaped) splits again; compare only escaped inputs.
        if units.allSatisfy({ !containsStartCode($0) }) {
            let again = AnnexB.nalUnitRanges(in: annexB).map { Array(annexB[$0]) }
            guard again == units else { return "Annex B → AVCC → Annex B changed the NAL units" }
        }
        return nil
    }

    /// AVCC access units with each length size: ranges inside the input, and the writer agrees
    /// with the reader on what is malformed and leaves its output alone when it throws.
    public static func avcc(_ input: [UInt8]) -> String? {
        for lengthSize in [1, 2, 4] {
            let ranges: [Range<Int>]?
            do {
                ranges = try AVCC.nalUnitRanges(in: input, lengthSize: lengthSize)
            } catch {
                ranges = nil
            }
            if let ranges, let problem = checkRanges(ranges, in: input) { return "length size \(lengthSize): \(problem)" }
            let before: [UInt8] = [0xAB]
            var out = before
            let written: Bool
            do {
                try withBytes(input) { (bytes) throws(BitstreamError) in
                    try AnnexB.appendAccessUnit(avcc: bytes, nalUnitLengthSize: lengthSize, parameterSets: [[0x67, 1]], to: &out)
                }
                written = true
            } catch {
                written = false
                if out != before { return "length size \(lengthSize): appendAccessUnit threw and changed its output" }
            }
            if written != (ranges != nil) {
                return "length size \(lengthSize): the reader and the writer disagree about whether the access unit is valid"
            }
            if let ranges, out.count != 1 + 6 + ranges.reduce(0, { $0 + 4 + $1.count }) {
                return "length size \(lengthSize): appendAccessUnit wrote \(out.count) bytes for \(ranges.count) NAL units"
            }
        }
        return nil
    }

    public static func emulationPrevention(_ input: [UInt8]) -> String? {
        let escaped = addEmulationPrevention(input)
        guard removeEmulationPrevention(escaped) == input else { return "remove(add(x)) is not x" }
        for index in escaped.indices.dropFirst(2) where escaped[index - 2] == 0 && escaped[index - 1] == 0 && escaped[index] <= 2 {
            return "the escaped bytes hold 00 00 0\(escaped[index]) at \(index - 2)"
        }
        _ = removeEmulationPrevention(input)
        return nil
    }

    /// A parsed SPS is one the writer can write, and it reads back the same.
    public static func sequenceParameterSet(_ input: [UInt8]) -> String? {
        guard let sps = try? SequenceParameterSet(nalUnit: input) else { return nil }
        guard sps.width > 0, sps.height > 0 else { return "parsed an SPS of \(sps.width)x\(sps.height)" }
        let summary = StreamReport.SequenceSummary(sps)
        _ = summary.profile + summary.level + (summary.frameRate ?? "")
        let again: SequenceParameterSet
        do {
            again = try SequenceParameterSet(rbsp: sps.rbsp())
        } catch {
            return "an SPS written from a parsed one does not parse: \(error)"
        }
        return checkRoundTrip(sps, again)
    }

    public static func pictureParameterSet(_ input: [UInt8]) -> String? {
        for chromaFormatIdc in [1, 3] {
            guard let pps = try? PictureParameterSet(nalUnit: input, chromaFormatIdc: chromaFormatIdc) else { continue }
            _ = StreamReport.PictureSummary(pps)
            do {
                let again = try PictureParameterSet(rbsp: pps.rbsp(), chromaFormatIdc: chromaFormatIdc)
                if let problem = checkRoundTrip(pps, again) { return problem }
            } catch {
                return "a PPS written from a parsed one does not parse: \(error)"
            }
        }
        return nil
    }

    /// An avcC record that parses writes a record that parses to the same description.
    public static func avcCRecord(_ input: [UInt8]) -> String? {
        guard let format = try? VideoFormatDescription(avcC: input) else { return nil }
        do {
            let again = try VideoFormatDescription(avcC: format.avcC())
            return again == format ? nil : "avcC → description → avcC changed the description"
        } catch {
            return "the avcC written for a parsed description does not parse: \(error)"
        }
    }

    /// The report of any stream it accepts can be printed and encoded as JSON.
    public static func inspect(_ input: [UInt8]) -> String? {
        guard let report = try? StreamInspector.inspect(annexB: input) else { return nil }
        _ = report.textDescription
        do {
            _ = try JSONEncoder().encode(report)
        } catch {
            return "the report does not encode as JSON: \(error)"
        }
        guard report.gopLengths.reduce(0, +) <= report.frames, report.idrFrames <= report.frames else {
            return "the report counts more GOP frames or IDR frames than frames"
        }
        return nil
    }

    /// The access units `remux` reads from a raw stream: each is valid AVCC, and the display
    /// positions given are each used once, from 0 up.
    public static func accessUnits(_ input: [UInt8]) -> String? {
        var positions: [Int] = []
        let failure: String? = input.withUnsafeBytes { bytes in
            var reader = AccessUnitReader(annexB: bytes)
            while true {
                guard let unit = try? reader.nextUnit() else { return nil }
                if (try? AVCC.nalUnitRanges(in: unit.data, lengthSize: 4)) == nil {
                    return "access unit \(positions.count) is not valid AVCC"
                }
                positions.append(unit.displayIndex)
            }
        }
        if let failure { return failure }
        guard positions.sorted() == Array(0..<positions.count) else {
            return "display positions \(positions.prefix(16)) are not each of 0..<\(positions.count) once"
        }
        return nil
    }

    /// Ranges must be non-empty, in order, apart and inside the input.
    public static func checkRanges(_ ranges: [Range<Int>], in input: [UInt8]) -> String? {
        var end = 0
        for range in ranges {
            guard !range.isEmpty else { return "an empty range \(range)" }
            guard range.lowerBound >= end else { return "range \(range) overlaps or precedes the one before" }
            guard range.upperBound <= input.count else { return "range \(range) runs past the \(input.count)-byte input" }
            end = range.upperBound
        }
        return nil
    }

    public static func checkRoundTrip<T: Equatable>(_ parsed: T, _ again: T) -> String? {
        parsed == again ? nil : "\(T.self) changed when written and read back:\n\(parsed)\n\(again)"
    }

    private static func containsStartCode(_ unit: [UInt8]) -> Bool {
        unit.indices.dropFirst(2).contains { unit[$0 - 2] == 0 && unit[$0 - 1] == 0 && unit[$0] <= 1 }
    }
}
