import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// The frame number the test pattern draws into every picture, as black and white luma
/// blocks that survive lossy H.264 coding, so a test can decode an encoded stream and check
/// that every frame arrived, once and in order.
///
/// Layout: 40 square blocks in reading order (left to right, then the next block row) from
/// the top-left corner of the picture:
///
///     slot  0–1   guard, white black
///     slot  2–33  frame number modulo 2³², Gray-coded, most significant bit first
///     slot 34–37  check nibble: XOR of the eight nibbles of the Gray-coded number
///     slot 38–39  guard, black white
///
/// White is luma 235 and black luma 16 (video range), with neutral chroma under every block.
/// Blocks are 16×16 pixels, one macroblock each, from 320 pixels wide; narrower pictures use
/// 8×8 blocks. Either way the code wraps onto as many block rows as the width needs (one row
/// from 640 wide, at most five rows at the 64-pixel minimum).
///
/// Why this shape: whole-macroblock blocks with a black-to-white step are far too costly for
/// an encoder to skip or blur at any sane quality, and deblocking touches at most three pixels
/// either side of an edge, so the block centres a reader samples stay clean. Gray coding makes
/// consecutive frames differ in one data block (and one check block), so the code costs the
/// encoder little. The guards and check nibble let a reader say "no code here" instead of
/// returning a number read from an arbitrary picture.
struct FrameCode: Sendable {
    static let slotCount = 40
    static let white: UInt8 = 235
    static let black: UInt8 = 16
    static let neutralChroma: UInt8 = 128
    private static let leadingGuard = [true, false]
    private static let trailingGuard = [false, true]

    let blockSize: Int
    let blocksPerRow: Int

    init(width: Int) {
        blockSize = width >= 320 ? 16 : 8
        blocksPerRow = width / blockSize
    }

    var blockRows: Int { (Self.slotCount + blocksPerRow - 1) / blocksPerRow }
    /// Rows of the picture, from the top, that the code may occupy.
    var bandHeight: Int { blockRows * blockSize }

    /// The top-left pixel of a slot's block.
    func origin(ofSlot slot: Int) -> (x: Int, y: Int) {
        ((slot % blocksPerRow) * blockSize, (slot / blocksPerRow) * blockSize)
    }

    /// The 40 blocks for a frame number, true for white.
    static func slots(for frameNumber: UInt32) -> [Bool] {
        let gray = frameNumber ^ (frameNumber >> 1)
        var bits = leadingGuard
        for bit in (0..<32).reversed() { bits.append(gray >> UInt32(bit) & 1 == 1) }
        let check = checkNibble(gray)
        for bit in (0..<4).reversed() { bits.append(check >> UInt32(bit) & 1 == 1) }
        return bits + trailingGuard
    }

    /// The frame number the blocks encode, or nil when the guards or check nibble disagree.
    static func frameNumber(fromSlots bits: [Bool]) -> UInt32? {
        guard bits.count == slotCount, Array(bits[0..<2]) == leadingGuard,
              Array(bits[38..<40]) == trailingGuard else { return nil }
        let gray = bits[2..<34].reduce(UInt32(0)) { $0 << 1 | ($1 ? 1 : 0) }
        let check = bits[34..<38].reduce(UInt32(0)) { $0 << 1 | ($1 ? 1 : 0) }
        guard check == checkNibble(gray) else { return nil }
        var number = gray
        var shift: UInt32 = 1
        while shift < 32 {
            number ^= number >> shift
            shift <<= 1
        }
        return number
    }

    private static func checkNibble(_ value: UInt32) -> UInt32 {
        (0..<8).reduce(UInt32(0)) { $0 ^ (value >> UInt32($1 * 4) & 0xF) }
    }

    /// Draws the code for `frameNumber` over the top of an I420 picture.
    func draw(_ frameNumber: UInt32, into buffer: PixelBuffer) {
        let luma = buffer.planes[0]
        let chromaBlock = blockSize / 2
        for (slot, isWhite) in Self.slots(for: frameNumber).enumerated() {
            let (x, y) = origin(ofSlot: slot)
            for row in y..<(y + blockSize) {
                memset(luma.baseAddress + row * luma.bytesPerRow + x,
                       Int32(isWhite ? Self.white : Self.black), blockSize)
            }
            for plane in buffer.planes.dropFirst() {
                for row in (y / 2)..<(y / 2 + chromaBlock) {
                    memset(plane.baseAddress + row * plane.bytesPerRow + x / 2,
                           Int32(Self.neutralChroma), chromaBlock)
                }
            }
        }
    }

    /// A block whose centre averages within this distance of mid-grey is neither black nor
    /// white: the picture does not carry a code there.
    static let ambiguityMargin = 40

    /// Reads the frame number back from a luma plane, or nil when no plausible code is there.
    ///
    /// Each block is judged by the mean of its central quarter, thresholded at mid-grey.
    func read(luma: UnsafePointer<UInt8>, bytesPerRow: Int) -> UInt32? {
        let inset = blockSize / 4
        let side = blockSize / 2
        var bits: [Bool] = []
        bits.reserveCapacity(Self.slotCount)
        for slot in 0..<Self.slotCount {
            let (x, y) = origin(ofSlot: slot)
            var sum = 0
            for row in (y + inset)..<(y + inset + side) {
                let start = luma + row * bytesPerRow + x + inset
                for column in 0..<side { sum += Int(start[column]) }
            }
            let mean = sum / (side * side)
            if abs(mean - 128) < Self.ambiguityMargin { return nil }
            bits.append(mean > 128)
        }
        return Self.frameNumber(fromSlots: bits)
    }
}
