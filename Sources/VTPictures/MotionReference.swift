/// The analysis pictures `MotionDetector` keeps, and its per-pixel passes over them.
///
/// The scene holds luma in sixteenths, so following a picture an eighth of the way each frame
/// neither stalls short of it nor drifts. Everything is allocated once; a picture costs no
/// allocation.
final class MotionReference {
    let width: Int
    let height: Int
    let count: Int
    private(set) var isLearnt = false

    /// The latest picture, shrunk to the analysis size.
    let current: UnsafeMutablePointer<UInt8>
    /// The still scene, luma × 16.
    private let scene: UnsafeMutablePointer<UInt16>
    /// How many pictures in a row each pixel has been changed.
    private let changedRun: UnsafeMutablePointer<UInt16>
    /// Set where the latest picture changed, a bit a pixel (`MotionDespeckle`'s layout).
    private let changed: UnsafeMutablePointer<UInt64>
    private let scratch: UnsafeMutablePointer<UInt64>
    private var changedCount = 0
    private let despeckle: MotionDespeckle
    /// Differences from the scene, -255…255 at index + 255.
    private let differenceCounts: UnsafeMutablePointer<Int32>
    /// Sizes of differences once the light is taken out, in quarters of a luma level.
    private let noiseCounts: UnsafeMutablePointer<Int32>
    private static let differenceBins = 511
    private static let noiseBins = 1024

    /// How far an eighth of the way is: a pixel that did not change moves this much of the way
    /// to the picture each frame (a shift of the difference in sixteenths).
    private static let followShift = 3
    /// Despeckle square of side 5: a 16-pixel frame-code block at 640x480 is 4 analysis pixels.
    static let despeckleRadius = 2

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
        count = width * height
        current = .allocate(capacity: count)
        scene = .allocate(capacity: count)
        changedRun = .allocate(capacity: count)
        despeckle = MotionDespeckle(width: width, height: height, radius: Self.despeckleRadius)
        changed = .allocate(capacity: despeckle.wordCount)
        scratch = .allocate(capacity: despeckle.wordCount)
        differenceCounts = .allocate(capacity: Self.differenceBins)
        noiseCounts = .allocate(capacity: Self.noiseBins)
    }

    deinit {
        current.deallocate()
        scene.deallocate()
        changedRun.deallocate()
        changed.deallocate()
        scratch.deallocate()
        differenceCounts.deallocate()
        noiseCounts.deallocate()
    }

    /// Takes the current picture as the scene.
    func learn() {
        for i in 0..<count { scene[i] = UInt16(current[i]) &<< 4 }
        changedRun.initialize(repeating: 0, count: count)
        isLearnt = true
    }

    func forget() {
        isLearnt = false
    }

    // The light and the noise are medians over every other pixel of every other row: thousands
    // of samples still, so the median is within a level of all the pixels', for a quarter of
    // the work.

    /// The change of light: the median difference of a watched pixel from the scene, in luma
    /// levels. A median, not a mean, so an object filling less than half of the picture does
    /// not move it.
    func lightChange(watched: UnsafePointer<UInt8>) -> Int {
        differenceCounts.initialize(repeating: 0, count: Self.differenceBins)
        var total = 0
        for row in stride(from: 0, to: height, by: 2) {
            for i in stride(from: row * width, to: row * width + width, by: 2) where watched[i] != 0 {
                let difference = Int(current[i]) &- (Int(scene[i]) &+ 8) &>> 4
                differenceCounts[difference &+ 255] &+= 1
                total &+= 1
            }
        }
        guard total > 0 else { return 0 }
        return Self.median(differenceCounts, bins: Self.differenceBins, total: total) - 255
    }

    /// The noise: the median size of a watched pixel's difference from the scene once the
    /// change of light is taken out, in luma levels.
    func noise(watched: UnsafePointer<UInt8>, lightChange: Int) -> Double {
        noiseCounts.initialize(repeating: 0, count: Self.noiseBins)
        let light = lightChange &<< 4
        var total = 0
        for row in stride(from: 0, to: height, by: 2) {
            for i in stride(from: row * width, to: row * width + width, by: 2) where watched[i] != 0 {
                let difference = Self.difference(picture: Int(current[i]) &<< 4, scene: Int(scene[i]), light: light)
                noiseCounts[min(difference &>> 2, Self.noiseBins - 1)] &+= 1
                total &+= 1
            }
        }
        guard total > 0 else { return 0 }
        return Double(Self.median(noiseCounts, bins: Self.noiseBins, total: total)) / 4
    }

    /// Marks the watched pixels that differ by more than `threshold` luma levels and moves the
    /// scene on (steps 2, 3 and 5 of `MotionDetector`).
    func markChanged(watched: UnsafePointer<UInt8>, lightChange: Int, threshold: Int, framesToAccept: Int) {
        changed.initialize(repeating: 0, count: despeckle.wordCount)
        changedCount = 0
        let light = lightChange &<< 4
        let limit = threshold &<< 4
        let round = 1 &<< (Self.followShift - 1)
        for row in 0..<height {
            let bits = changed + row * despeckle.wordsPerRow
            let first = row * width
            for x in 0..<width {
                let i = first &+ x
                let picture = Int(current[i]) &<< 4
                let stored = Int(scene[i])
                if watched[i] != 0 && Self.difference(picture: picture, scene: stored, light: light) > limit {
                    bits[x &>> 6] |= 1 &<< UInt64(x & 63)
                    changedCount &+= 1
                    let run = Int(changedRun[i]) &+ 1
                    if run >= framesToAccept {
                        scene[i] = UInt16(truncatingIfNeeded: picture)
                        changedRun[i] = 0
                    } else {
                        changedRun[i] = UInt16(truncatingIfNeeded: run)
                    }
                } else {
                    changedRun[i] = 0
                    scene[i] = UInt16(truncatingIfNeeded: stored &+ (picture &- stored &+ round) &>> Self.followShift)
                }
            }
        }
    }

    /// How many pixels stay changed once speckles are taken out (all of them watched: a pixel
    /// outside the mask is never marked, and an opening only gives back what it took).
    func despeckledCount() -> Int {
        guard changedCount > 0 else { return 0 }
        despeckle.open(changed, scratch: scratch)
        var total = 0
        for w in 0..<despeckle.wordCount { total &+= changed[w].nonzeroBitCount }
        return total
    }

    /// How far a pixel (in sixteenths) is from the scene: from the scene as it was and from
    /// the scene in the new light, whichever is nearer. A pixel that kept its value while the
    /// light changed (a lamp, a clipped sky, the frame code) is as still as one that followed
    /// the light.
    @inline(__always)
    private static func difference(picture: Int, scene: Int, light: Int) -> Int {
        let raw = picture &- scene
        return min(abs(raw), abs(raw &- light))
    }

    /// The bin holding the middle one of `total` counted values.
    private static func median(_ counts: UnsafeMutablePointer<Int32>, bins: Int, total: Int) -> Int {
        let middle = (total + 1) / 2
        var seen = 0
        for bin in 0..<bins {
            seen += Int(counts[bin])
            if seen >= middle { return bin }
        }
        return bins - 1
    }
}
