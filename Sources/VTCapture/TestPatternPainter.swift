import VTCore

#if canImport(Glibc)
import Glibc
#endif

/// Paints test-pattern pictures: a textured background panning diagonally, a striped box
/// bouncing across it on its own path, and the frame code along the top.
///
/// That gives an encoder what a camera scene gives it: global motion to find, an object
/// moving against it (with the background it uncovers), sharp edges, smooth gradients, fine
/// detail and colour. Being a pure function of the frame number, any frame can be recreated.
///
/// Painting is cheap enough for 1080p at hundreds of frames per second: the background is a
/// precomputed strip copied one row at a time from an offset that moves each frame, and only
/// the box and the code are drawn per pixel row.
struct TestPatternPainter: Sendable {
    let width: Int
    let height: Int
    let code: FrameCode
    /// With the test sound: frames on the `FlashSchedule` are painted white below the code.
    let flashes: FlashSchedule?

    /// The background repeats every `period` luma samples in both directions, so a strip of
    /// `period` rows, `period` samples wider than the picture, holds every row at every offset.
    static let period = 256
    /// Background motion per frame. Even, so the chroma planes move by whole samples too.
    static let panPerFrame = (x: 4, y: 2)
    static let boxPerFrame = (x: 6, y: 4)

    private let lumaStrip: [UInt8]
    private let lumaStripWidth: Int
    private let chromaStrips: (u: [UInt8], v: [UInt8])
    private let chromaStripWidth: Int
    private let box: (width: Int, height: Int)

    init(width: Int, height: Int, flashes: FlashSchedule? = nil) {
        self.width = width
        self.height = height
        self.flashes = flashes
        code = FrameCode(width: width)
        let p = Self.period
        let tile = Self.lumaTile()
        lumaStripWidth = width + p
        lumaStrip = Self.repeatRows(of: tile, tileWidth: p, rows: p, toWidth: lumaStripWidth)
        let cp = p / 2
        let chroma = Self.chromaTiles()
        chromaStripWidth = (width + 1) / 2 + cp
        chromaStrips = (Self.repeatRows(of: chroma.u, tileWidth: cp, rows: cp, toWidth: chromaStripWidth),
                        Self.repeatRows(of: chroma.v, tileWidth: cp, rows: cp, toWidth: chromaStripWidth))
        box = (max(8, width / 5) & ~1, max(8, height / 5) & ~1)
    }

    /// Paints frame `n` into an I420 buffer of the painter's size.
    func paint(frame n: Int, into buffer: PixelBuffer) {
        precondition(buffer.format == .i420 && buffer.width == width && buffer.height == height)
        let p = Self.period
        let panX = (n * Self.panPerFrame.x) % p
        let panY = (n * Self.panPerFrame.y) % p
        let luma = buffer.planes[0]
        lumaStrip.withUnsafeBufferPointer { strip in
            for row in 0..<height {
                let source = strip.baseAddress! + ((row + panY) % p) * lumaStripWidth + panX
                memcpy(luma.baseAddress + row * luma.bytesPerRow, source, width)
            }
        }
        for (plane, strip) in [(buffer.planes[1], chromaStrips.u), (buffer.planes[2], chromaStrips.v)] {
            strip.withUnsafeBufferPointer { strip in
                for row in 0..<plane.rows {
                    let source = strip.baseAddress! + ((row + panY / 2) % (p / 2)) * chromaStripWidth + panX / 2
                    memcpy(plane.baseAddress + row * plane.bytesPerRow, source, plane.rowBytes)
                }
            }
        }
        drawBox(frame: n, into: buffer)
        if flashes?.isFlash(frame: n) == true { paintFlash(into: buffer) }
        code.draw(UInt32(truncatingIfNeeded: n), into: buffer)
    }

    /// A flash: the whole picture below the code band white, so it shows at a glance and a
    /// test finds it by the mean brightness of the lower half.
    private func paintFlash(into buffer: PixelBuffer) {
        let top = code.bandHeight
        for (index, plane) in buffer.planes.enumerated() {
            let first = index == 0 ? top : top / 2
            let rows = index == 0 ? height : (height + 1) / 2
            let columns = index == 0 ? width : (width + 1) / 2
            let value = Int32(index == 0 ? FrameCode.white : FrameCode.neutralChroma)
            for row in first..<rows {
                memset(plane.baseAddress + row * plane.bytesPerRow, value, columns)
            }
        }
    }

    /// Where the box is in frame `n`: bouncing between the edges, below the code band, at even
    /// coordinates so its chroma lines up with its luma.
    func boxOrigin(frame n: Int) -> (x: Int, y: Int) {
        let top = code.bandHeight
        let x = Self.bounce(n * Self.boxPerFrame.x, range: width - box.width)
        let y = top + Self.bounce(n * Self.boxPerFrame.y, range: height - top - box.height)
        return (x & ~1, y & ~1)
    }

    private func drawBox(frame n: Int, into buffer: PixelBuffer) {
        let (x, y) = boxOrigin(frame: n)
        let rows = min(box.height, height - y)
        let luma = buffer.planes[0]
        for row in 0..<rows {
            // Stripes give the box texture of its own, so motion search has something to lock on.
            let value: Int32 = (row / 4) % 2 == 0 ? 210 : 150
            memset(luma.baseAddress + (y + row) * luma.bytesPerRow + x, value, box.width)
        }
        for (plane, value) in [(buffer.planes[1], Int32(64)), (buffer.planes[2], Int32(200))] {
            for row in 0..<(rows / 2) {
                memset(plane.baseAddress + (y / 2 + row) * plane.bytesPerRow + x / 2, value, box.width / 2)
            }
        }
    }

    /// A triangle wave: 0 up to `range` and back, so the box reverses at the edges.
    private static func bounce(_ t: Int, range: Int) -> Int {
        guard range > 0 else { return 0 }
        let m = t % (2 * range)
        return m <= range ? m : 2 * range - m
    }

    /// One period of background luma: large smooth shapes, a checkerboard for sharp edges and
    /// hashed fine detail, all within video range. Every term repeats every `period` samples.
    private static func lumaTile() -> [UInt8] {
        let p = period
        var tile = [UInt8](repeating: 0, count: p * p)
        let twoPi = 2 * Double.pi
        for y in 0..<p {
            let wave = cos(twoPi * 2 * Double(y) / Double(p))
            for x in 0..<p {
                var value = 120 + 45 * sin(twoPi * Double(x) / Double(p)) * wave
                value += ((x / 32 + y / 32) % 2 == 0) ? 22 : -22
                value += Double(detail(x, y)) - 8
                tile[y * p + x] = UInt8(min(235, max(16, value.rounded())))
            }
        }
        return tile
    }

    /// One period of each chroma plane (half the luma period): slow colour gradients crossing
    /// at an angle, so hue changes across the picture in both directions.
    private static func chromaTiles() -> (u: [UInt8], v: [UInt8]) {
        let p = period / 2
        var u = [UInt8](repeating: 0, count: p * p)
        var v = [UInt8](repeating: 0, count: p * p)
        let twoPi = 2 * Double.pi
        for y in 0..<p {
            for x in 0..<p {
                u[y * p + x] = UInt8(128 + 50 * sin(twoPi * Double(x) / Double(p)))
                v[y * p + x] = UInt8(128 + 50 * sin(twoPi * Double(x + 2 * y) / Double(p)))
            }
        }
        return (u, v)
    }

    /// Deterministic pseudo-random detail in 0..<16 from a position (an integer hash, so no
    /// random generator state is involved and every run paints the same pictures).
    private static func detail(_ x: Int, _ y: Int) -> Int {
        var h = UInt32(truncatingIfNeeded: x &* 73_856_093 ^ y &* 19_349_663)
        h ^= h >> 13
        h = h &* 0x5bd1_e995
        h ^= h >> 15
        return Int(h & 15)
    }

    /// Lays a tile side by side until each row is `width` samples wide.
    private static func repeatRows(of tile: [UInt8], tileWidth: Int, rows: Int, toWidth width: Int) -> [UInt8] {
        var strip = [UInt8](repeating: 0, count: rows * width)
        for row in 0..<rows {
            for x in 0..<width {
                strip[row * width + x] = tile[row * tileWidth + x % tileWidth]
            }
        }
        return strip
    }
}
