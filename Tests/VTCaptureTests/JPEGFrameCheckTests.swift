import Foundation
import Testing
import VTCapture
import VTPictures

/// The cheap check of a camera's JPEG (`JPEGFrameCheck`) on JPEGs ffmpeg made: whole ones pass
/// (with a UVC camera's zero padding, and without Huffman tables), and every cut, every header
/// damage and a frame of another size are found, without reading past the bytes.
@Suite struct JPEGFrameCheckTests {
    /// A 64x48 JPEG from ffmpeg's test source, as `-f mjpeg` writes one frame.
    static let jpeg: [UInt8] = {
        let data = try? runTool(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=1",
                                 "-frames:v", "1", "-pix_fmt", "yuvj422p", "-f", "mjpeg", "-"])
        return Array(data ?? Data())
    }()

    /// The segments of `jpeg` up to its scan: (marker, offset of the 0xFF, length with the marker).
    static func segments(_ jpeg: [UInt8]) -> [(marker: UInt8, offset: Int, length: Int)] {
        var found: [(UInt8, Int, Int)] = []
        var at = 2
        while at + 4 <= jpeg.count, jpeg[at] == 0xFF {
            let marker = jpeg[at + 1]
            let length = Int(jpeg[at + 2]) << 8 | Int(jpeg[at + 3])
            found.append((marker, at, length + 2))
            if marker == 0xDA { break }
            at += length + 2
        }
        return found
    }

    @Test func aWholeJPEGPasses() throws {
        try #require(Self.jpeg.count > 200, "ffmpeg made no JPEG")
        #expect(JPEGFrameCheck.problem(Self.jpeg, width: 64, height: 48) == nil)
        // UVC cameras pad their frames with zero bytes after EOI.
        #expect(JPEGFrameCheck.problem(Self.jpeg + [UInt8](repeating: 0, count: 300), width: 64, height: 48) == nil)
    }

    /// MJPEG cameras leave out the Huffman tables; a decoder takes the standard's.
    @Test func aJPEGWithoutHuffmanTablesPasses() throws {
        var jpeg = Self.jpeg
        let tables = Self.segments(jpeg).filter { $0.marker == 0xC4 }
        try #require(!tables.isEmpty, "ffmpeg's JPEG has no DHT")
        for table in tables.reversed() { jpeg.removeSubrange(table.offset..<(table.offset + table.length)) }
        #expect(JPEGFrameCheck.problem(jpeg, width: 64, height: 48) == nil)
    }

    @Test func aFrameOfAnotherSizeIsFound() {
        #expect(JPEGFrameCheck.problem(Self.jpeg, width: 640, height: 480) == .size(width: 64, height: 48))
    }

    /// Every cut of the frame short of its end (what a filled-up buffer or a lost packet leaves)
    /// is found, and so is a frame with no start.
    @Test func everyCutIsFound() throws {
        try #require(Self.jpeg.count > 200)
        for length in 0..<Self.jpeg.count {
            let cut = Array(Self.jpeg[..<length])
            #expect(JPEGFrameCheck.problem(cut, width: 64, height: 48) != nil, "cut to \(length) of \(Self.jpeg.count) bytes")
            // Zeros after the cut (the rest of a driver's buffer) do not hide it.
            #expect(JPEGFrameCheck.problem(cut + [0, 0, 0, 0], width: 64, height: 48) != nil, "cut to \(length), padded")
        }
        #expect(JPEGFrameCheck.problem(Array(Self.jpeg[2...]), width: 64, height: 48) == .noStartOfImage)
    }

    /// A header segment whose length runs past the frame, a byte that should be a marker, and
    /// a frame type players do not decode (lossless) are found.
    @Test func aDamagedHeaderIsFound() throws {
        let segments = Self.segments(Self.jpeg)
        let quantization = try #require(segments.first { $0.marker == 0xDB })
        var long = Self.jpeg
        long[quantization.offset + 2] = 0xFF
        #expect(JPEGFrameCheck.problem(long, width: 64, height: 48) == .damagedHeader(offset: quantization.offset))
        var notMarker = Self.jpeg
        notMarker[quantization.offset] = 0x12
        #expect(JPEGFrameCheck.problem(notMarker, width: 64, height: 48) == .damagedHeader(offset: quantization.offset))
        let frame = try #require(segments.first { $0.marker == 0xC0 })
        var lossless = Self.jpeg
        lossless[frame.offset + 1] = 0xC3
        #expect(JPEGFrameCheck.problem(lossless, width: 64, height: 48) == .unsupportedFrame(marker: 0xC3))
        var noFrame = Self.jpeg
        noFrame[frame.offset + 1] = 0xE5  // an APP5 segment in its place
        #expect(JPEGFrameCheck.problem(noFrame, width: 64, height: 48) == .noFrameHeader)
    }

    /// Any byte of the header changed to a few values: the start-of-image marker's are always
    /// found, and every other change gets an answer without a read past the end.
    @Test func everyByteOfTheHeaderChangedGivesAnAnswer() throws {
        let scan = try #require(Self.segments(Self.jpeg).first { $0.marker == 0xDA })
        for offset in 0..<(scan.offset + scan.length) {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0xD8, 0xD9, 0xDA, 0xFE, 0xFF] where value != Self.jpeg[offset] {
                var changed = Self.jpeg
                changed[offset] = value
                let problem = JPEGFrameCheck.problem(changed, width: 64, height: 48)
                if offset < 2 { #expect(problem == .noStartOfImage, "byte \(offset) changed to \(value)") }
            }
        }
    }
}
