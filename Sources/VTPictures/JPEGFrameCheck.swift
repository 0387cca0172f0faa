/// A cheap check of a Motion-JPEG frame as a camera delivered it, for storing it without
/// decoding: the marker segments up to the scan are whole, the frame (SOF) is baseline or
/// progressive Huffman coding of the size negotiated, and the entropy-coded data ends in EOI.
/// A frame cut short (the driver's buffer filled before the frame ended, a USB packet lost at
/// the end) has no EOI; a damaged header has a segment running past the end. What it does not
/// see, damage inside the entropy-coded data, only a decode finds.
///
/// UVC cameras pad a frame with zero bytes after EOI and often leave out the Huffman tables
/// (DHT), which a decoder then takes from the JPEG standard (as the MJPEG AVI1 convention
/// says): both are accepted.
public enum JPEGFrameCheck {
    public enum Problem: Equatable, Sendable, CustomStringConvertible {
        case tooShort(bytes: Int)
        case noStartOfImage
        /// A marker segment's length runs past the end, or a byte where a marker belongs is not one.
        case damagedHeader(offset: Int)
        case noFrameHeader
        /// A frame type other than baseline, extended or progressive Huffman coding.
        case unsupportedFrame(marker: UInt8)
        case size(width: Int, height: Int)
        case noScan
        /// The frame ends without EOI: cut short.
        case noEndOfImage

        public var description: String {
            switch self {
            case .tooShort(let bytes): "\(bytes) bytes are too few for a JPEG"
            case .noStartOfImage: "it does not begin with a JPEG start-of-image marker"
            case .damagedHeader(let offset): "its header is damaged at byte \(offset)"
            case .noFrameHeader: "it has no frame header (SOF)"
            case .unsupportedFrame(let marker): "its frame type (marker 0xFF\(String(marker, radix: 16, uppercase: true))) is not one a player decodes"
            case .size(let width, let height): "it is \(width)x\(height), not the size the camera was set to"
            case .noScan: "it has no scan (SOS)"
            case .noEndOfImage: "it is cut short (no end-of-image marker)"
            }
        }
    }

    /// What is wrong with `bytes` as a JPEG of `width`×`height` (nil: nothing this check sees).
    public static func problem(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int) -> Problem? {
        let count = bytes.count
        guard count >= 4 else { return .tooShort(bytes: count) }
        guard bytes[0] == 0xFF, bytes[1] == 0xD8 else { return .noStartOfImage }
        var at = 2
        var sawFrame = false
        while true {
            // Markers may be preceded by fill bytes (0xFF).
            guard at + 1 < count, bytes[at] == 0xFF else { return at + 1 < count ? .damagedHeader(offset: at) : .noScan }
            var marker = bytes[at + 1]
            while marker == 0xFF, at + 2 < count {
                at += 1
                marker = bytes[at + 1]
            }
            at += 2
            switch marker {
            case 0xD8, 0xD9, 0x00, 0xFF:
                return .damagedHeader(offset: at - 2)
            case 0x01, 0xD0...0xD7:
                continue  // markers without a length
            default:
                break
            }
            guard at + 2 <= count else { return .damagedHeader(offset: at - 2) }
            let length = Int(bytes[at]) << 8 | Int(bytes[at + 1])
            guard length >= 2, at + length <= count else { return .damagedHeader(offset: at - 2) }
            switch marker {
            case 0xC0, 0xC1, 0xC2:
                guard length >= 8 else { return .damagedHeader(offset: at - 2) }
                let frameHeight = Int(bytes[at + 3]) << 8 | Int(bytes[at + 4])
                let frameWidth = Int(bytes[at + 5]) << 8 | Int(bytes[at + 6])
                guard frameWidth == width, frameHeight == height else { return .size(width: frameWidth, height: frameHeight) }
                sawFrame = true
            case 0xC3, 0xC5...0xC7, 0xC9...0xCB, 0xCD...0xCF:
                return .unsupportedFrame(marker: marker)
            case 0xDA:
                guard sawFrame else { return .noFrameHeader }
                return endsWithEndOfImage(bytes, after: at + length) ? nil : .noEndOfImage
            default:
                break
            }
            at += length
        }
    }

    /// Whether the last bytes, past any zero padding, are EOI (0xFF 0xD9) beyond `start`.
    private static func endsWithEndOfImage(_ bytes: UnsafeRawBufferPointer, after start: Int) -> Bool {
        var end = bytes.count
        while end > start, bytes[end - 1] == 0 { end -= 1 }
        return end - start >= 2 && bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9
    }
}

extension JPEGFrameCheck {
    /// `problem` of an array's bytes.
    public static func problem(_ bytes: [UInt8], width: Int, height: Int) -> Problem? {
        bytes.withUnsafeBytes { problem($0, width: width, height: height) }
    }
}
