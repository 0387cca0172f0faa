/// Takes speckles out of a map of changed pixels: a binary opening (an erosion, then a dilation)
/// with a square of side 2 × radius + 1, as Motion's despeckle filter does with its erode and
/// dilate steps.
///
/// Why: noise, compression artefacts and flickering details (a blinking light, a few frame-code
/// blocks) change scattered pixels and thin lines; the erosion removes whatever no square fits
/// in, and the dilation gives what survived back its size, so the area counted is that of
/// real shapes only.
///
/// The map holds a bit a pixel, 64 pixels a word (pixel x of a row is bit x % 64 of word
/// x / 64), rows `wordsPerRow` words apart, and the bits past a row's end clear. A step along
/// a row is then a shift of whole words, and a step across rows an AND or OR of words: the
/// whole opening costs a few operations per 64 pixels.
struct MotionDespeckle {
    let width: Int
    let height: Int
    let radius: Int
    let wordsPerRow: Int

    init(width: Int, height: Int, radius: Int) {
        precondition(radius >= 0 && radius < 64)
        self.width = width
        self.height = height
        self.radius = radius
        wordsPerRow = (width + 63) / 64
    }

    var wordCount: Int { wordsPerRow * height }

    /// Opens `map` in place, using `scratch` (as large). Outside the picture nothing is set: a
    /// thin band along an edge (the frame code's) is eroded like one anywhere else, while a
    /// large shape touching the edge gets all of itself back from the dilation.
    func open(_ map: UnsafeMutablePointer<UInt64>, scratch: UnsafeMutablePointer<UInt64>) {
        guard radius > 0 else { return }
        alongRows(map, into: scratch, erode: true)
        acrossRows(scratch, into: map, erode: true)
        alongRows(map, into: scratch, erode: false)
        acrossRows(scratch, into: map, erode: false)
        clearPastRowEnds(map)
    }

    /// Each pixel combined with its neighbours up to `radius` to its left and right: all of
    /// them set (erode) or any (dilate).
    private func alongRows(_ source: UnsafeMutablePointer<UInt64>, into target: UnsafeMutablePointer<UInt64>,
                           erode: Bool) {
        for row in 0..<height {
            let words = source + row * wordsPerRow
            for w in 0..<wordsPerRow {
                let word = words[w]
                let before = w > 0 ? words[w - 1] : 0
                let after = w + 1 < wordsPerRow ? words[w + 1] : 0
                var combined = word
                for distance in 1...radius {
                    // The pixel `distance` to the right comes down into this bit, the one to
                    // the left up into it; across a word boundary from the word beside.
                    let right = word >> UInt64(distance) | after << UInt64(64 - distance)
                    let left = word << UInt64(distance) | before >> UInt64(64 - distance)
                    combined = erode ? combined & right & left : combined | right | left
                }
                target[row * wordsPerRow + w] = combined
            }
        }
    }

    /// Each pixel combined with the pixels up to `radius` rows above and below it.
    private func acrossRows(_ source: UnsafeMutablePointer<UInt64>, into target: UnsafeMutablePointer<UInt64>,
                            erode: Bool) {
        for row in 0..<height {
            for w in 0..<wordsPerRow {
                var combined: UInt64 = erode ? ~0 : 0
                for other in (row - radius)...(row + radius) {
                    let word = other >= 0 && other < height ? source[other * wordsPerRow + w] : 0
                    combined = erode ? combined & word : combined | word
                }
                target[row * wordsPerRow + w] = combined
            }
        }
    }

    /// The dilation spreads past the right edge into the last word's spare bits.
    private func clearPastRowEnds(_ map: UnsafeMutablePointer<UInt64>) {
        let used = width - (wordsPerRow - 1) * 64
        guard used < 64 else { return }
        let keep: UInt64 = (1 << UInt64(used)) - 1
        for row in 0..<height { map[row * wordsPerRow + wordsPerRow - 1] &= keep }
    }
}
