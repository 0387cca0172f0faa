import VTCore
import VTTestSupport
@testable import VTCapture

#if canImport(Glibc)
import Glibc
#endif

/// Pictures of a fixed camera's scene for the motion detector, made frame by frame: a still
/// textured background with what a test puts in front of it (a moving square, a change of
/// light, camera noise, flickering speckles) and the frame code along the top, as vtrecord's
/// test pattern and the fake camera draw it.
struct SyntheticScene {
    var width = 640
    var height = 480
    /// Luma noise of up to ± this, new in every frame.
    var noise = 0
    /// Where the square's top-left corner is in a frame, nil where there is none.
    var square: (Int) -> (x: Int, y: Int)? = { _ in nil }
    var squareSide = 80
    var squareLuma: UInt8 = 235
    /// The square painted as a checkerboard of 16-pixel black and white tiles instead.
    var squareChecked = false
    /// How much the light shifts the scene's luma (not the frame code's) in a frame.
    var light: (Int) -> Int = { _ in 0 }
    /// The part of the picture covered by bright 8×8 speckles, at new places in every frame.
    var speckles = 0.0
    var frameCode = true

    /// The square's top-left corner moving right `step` pixels a frame through frames
    /// `frames`, vertically centred.
    static func crossing(_ frames: Range<Int>, from x: Int = 40, step: Int = 4, height: Int = 480,
                         side: Int = 80) -> (Int) -> (x: Int, y: Int)? {
        { n in frames.contains(n) ? (x + step * (n - frames.lowerBound), (height - side) / 2) : nil }
    }

    /// A light that shifts by `delta` linearly from frame `start` to `end`, then stays.
    static func ramp(from start: Int, to end: Int, delta: Int) -> (Int) -> Int {
        { n in n < start ? 0 : n >= end ? delta : delta * (n - start) / max(1, end - start) }
    }

    /// Large smooth shapes, a checkerboard for edges and a bright corner that a brighter light
    /// saturates, all within video range.
    func backgroundLuma(x: Int, y: Int) -> Int {
        let checker = (x / 32 + y / 32) % 2 == 0 ? 20 : -20
        return min(235, 40 + x * 150 / width + y * 40 / height + checker)
    }

    /// Makes frames one after another into one reused picture.
    struct Painter {
        let scene: SyntheticScene
        let picture: PixelBuffer
        private let background: [UInt8]
        private var random: SeededRandom

        init(_ scene: SyntheticScene, seed: UInt64 = 1) {
            self.scene = scene
            picture = PixelBuffer(format: .i420, width: scene.width, height: scene.height)
            for plane in picture.planes.dropFirst() {
                for row in 0..<plane.rows { memset(plane.baseAddress + row * plane.bytesPerRow, 128, plane.rowBytes) }
            }
            var background = [UInt8](repeating: 0, count: scene.width * scene.height)
            for y in 0..<scene.height {
                for x in 0..<scene.width { background[y * scene.width + x] = UInt8(scene.backgroundLuma(x: x, y: y)) }
            }
            self.background = background
            random = SeededRandom(seed: seed)
        }

        /// Paints frame `n` and returns the picture (valid until the next call).
        mutating func paint(frame n: Int) -> PixelBuffer {
            let width = scene.width, height = scene.height
            let luma = picture.planes[0]
            background.withUnsafeBufferPointer { source in
                for row in 0..<height {
                    memcpy(luma.baseAddress + row * luma.bytesPerRow, source.baseAddress! + row * width, width)
                }
            }
            if let (x, y) = scene.square(n) {
                let left = max(0, x), right = min(width, x + scene.squareSide)
                for row in max(0, y)..<min(height, y + scene.squareSide) where left < right {
                    let line = luma.baseAddress + row * luma.bytesPerRow
                    guard scene.squareChecked else {
                        memset(line + left, Int32(scene.squareLuma), right - left)
                        continue
                    }
                    for column in left..<right { line[column] = ((column - x) / 16 + (row - y) / 16) % 2 == 0 ? 235 : 16 }
                }
            }
            paintSpeckles()
            let shift = scene.light(n)
            if shift != 0 || scene.noise > 0 { shiftAndNoise(shift) }
            if scene.frameCode { FrameCode(width: width).draw(UInt32(n), into: picture) }
            return picture
        }

        private mutating func paintSpeckles() {
            guard scene.speckles > 0 else { return }
            let luma = picture.planes[0]
            let blocks = (scene.width / 8) * (scene.height / 8)
            for _ in 0..<Int(Double(blocks) * scene.speckles) {
                let block = random.next(in: 0...(blocks - 1))
                let x = (block % (scene.width / 8)) * 8, y = (block / (scene.width / 8)) * 8
                for row in y..<(y + 8) { memset(luma.baseAddress + row * luma.bytesPerRow + x, 235, 8) }
            }
        }

        /// The light's shift and the noise, clipped to video range as a camera's picture is.
        private mutating func shiftAndNoise(_ shift: Int) {
            let luma = picture.planes[0]
            let amplitude = scene.noise
            let span = UInt64(2 * amplitude + 1)
            for row in 0..<scene.height {
                let line = luma.baseAddress + row * luma.bytesPerRow
                var bits: UInt64 = 0
                for x in 0..<scene.width {
                    var value = Int(line[x]) + shift
                    if amplitude > 0 {
                        if x % 8 == 0 { bits = random.next() }
                        value += Int((bits & 0xFF) % span) - amplitude
                        bits >>= 8
                    }
                    line[x] = UInt8(min(235, max(16, value)))
                }
            }
        }
    }
}
