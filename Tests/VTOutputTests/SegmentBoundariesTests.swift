import Testing
import VTCore
@testable import VTOutput

/// Segment boundaries on both sides of an encoder that delays and reorders frames.
@Suite struct SegmentBoundariesTests {
    static func time(_ frame: Int, fps: Int = 30) -> MediaTime {
        MediaTime(value: Int64(frame), timescale: Int32(fps))
    }

    /// A stand-in encoder: frames come out `delay` frames late, and each run of `bFrames`
    /// frames is reordered behind its anchor, as with B-frames; a forced frame is an IDR that
    /// ends the run before it (the last of which becomes its anchor), as x264 and the VA-API
    /// planner do. Returns the frames written to each file.
    static func run(_ policy: SegmentPolicy, frames: Int, bFrames: Int = 2, delay: Int = 5,
                    keyInterval: Int = 1000, bytesPerFrame: Int64 = 100) -> [[Int]] {
        var boundaries = SegmentBoundaries(policy: policy)
        var files: [[Int]] = [[]]
        var fileBytes: Int64 = 0
        var pending: [Int] = []
        var decodeOrder: [(frame: Int, key: Bool)] = []
        var lastKey = 0
        func emit(_ items: [(frame: Int, key: Bool)]) { decodeOrder += items }
        func drainReady(keepLast count: Int) {
            while decodeOrder.count > count {
                let out = decodeOrder.removeFirst()
                let encoded = EncodedFrame(data: [], pts: time(out.frame), dts: time(out.frame), isKeyFrame: out.key,
                                           token: FrameToken(UInt64(out.frame)))
                if boundaries.switchesFile(before: encoded) {
                    files.append([])
                    fileBytes = 0
                }
                files[files.count - 1].append(out.frame)
                fileBytes += bytesPerFrame
                boundaries.written(segmentBytes: fileBytes)
            }
        }
        for n in 0..<frames {
            let forced = boundaries.startsSegment(FrameToken(UInt64(n)), at: time(n))
            if n == 0 || forced || n - lastKey >= keyInterval {
                if let anchor = pending.popLast() { emit([(anchor, false)] + pending.map { ($0, false) }) }
                pending = []
                emit([(n, true)])
                lastKey = n
            } else if pending.count < bFrames {
                pending.append(n)
            } else {
                emit([(n, false)] + pending.map { ($0, false) })
                pending = []
            }
            drainReady(keepLast: delay)
        }
        if let anchor = pending.popLast() { emit([(anchor, false)] + pending.map { ($0, false) }) }
        drainReady(keepLast: 0)
        return files
    }

    @Test func timeBoundariesCutAtMultiplesOfTheSegmentTime() {
        let files = Self.run(SegmentPolicy(duration: 2), frames: 300)
        #expect(files.count == 5)
        for (k, file) in files.enumerated() {
            #expect(file.sorted() == Array(k * 60..<(k + 1) * 60), "file \(k)")
        }
    }

    @Test func aTimeThatIsNotAWholeNumberOfFrames() {
        // 0.7 s at 30 fps: files start at frames 0, 21, 42, 63 (the first frame at or after k × 0.7).
        let files = Self.run(SegmentPolicy(duration: 0.7), frames: 84)
        #expect(files.map { $0.min()! } == [0, 21, 42, 63])
        #expect(files.flatMap { $0 }.sorted() == Array(0..<84))
    }

    @Test func theFirstFileIsNotCutBeforeItsFirstFrame() {
        var boundaries = SegmentBoundaries(policy: SegmentPolicy(duration: 1))
        // A source whose first frame is late (a camera after a pause) still opens file 0 with it.
        #expect(boundaries.startsSegment(FrameToken(95), at: Self.time(95)) == false)
        #expect(boundaries.startsSegment(FrameToken(120), at: Self.time(120)) == true)
        #expect(boundaries.startsSegment(FrameToken(121), at: Self.time(121)) == false)
    }

    @Test func aSkippedBoundaryStartsOnlyOneFile() {
        var boundaries = SegmentBoundaries(policy: SegmentPolicy(duration: 1))
        #expect(boundaries.startsSegment(FrameToken(0), at: Self.time(0)) == false)
        // A gap across three boundaries: one new file, then none until 5 s.
        #expect(boundaries.startsSegment(FrameToken(120), at: Self.time(120)) == true)
        #expect(boundaries.startsSegment(FrameToken(149), at: Self.time(149)) == false)
        #expect(boundaries.startsSegment(FrameToken(150), at: Self.time(150)) == true)
    }

    @Test func keyframesOfTheEncoderAloneDoNotCut() {
        let files = Self.run(SegmentPolicy(duration: 2), frames: 120, keyInterval: 25)
        #expect(files.map(\.count) == [60, 60])
    }

    @Test func sizeCutsAtTheNextFrameFedAfterAFileFills() {
        // 100 bytes a frame, 1000 a file: the 10th frame out fills a file while 5 are held back.
        let files = Self.run(SegmentPolicy(maxBytes: 1000), frames: 100, bFrames: 0, delay: 5)
        #expect(files.flatMap { $0 } == Array(0..<100))
        for file in files.dropLast() {
            #expect((10...16).contains(file.count), "\(files.map(\.count))")
        }
        #expect(files.count >= 6)
    }

    @Test func sizeWithReorderingKeepsEveryFrameOnce() {
        let files = Self.run(SegmentPolicy(maxBytes: 1500), frames: 200, bFrames: 3, delay: 8)
        #expect(files.flatMap { $0 }.sorted() == Array(0..<200))
        // Each file holds a run of display order: its frames follow the previous file's.
        for (a, b) in zip(files, files.dropFirst()) { #expect(a.max()! < b.min()!) }
    }

    @Test func aMarkedFrameTheEncoderDidNotMakeAKeyframeMovesTheCutToTheNextKeyframe() {
        var boundaries = SegmentBoundaries(policy: SegmentPolicy(duration: 1))
        for n in 0..<60 {
            #expect(boundaries.startsSegment(FrameToken(UInt64(n)), at: Self.time(n)) == (n == 30))
        }
        func out(_ n: Int, key: Bool) -> Bool {
            boundaries.switchesFile(before: EncodedFrame(data: [], pts: Self.time(n), dts: Self.time(n), isKeyFrame: key,
                                                         token: FrameToken(UInt64(n))))
        }
        let switches = (0..<60).map { out($0, key: $0 == 0 || $0 == 40 || $0 == 50) }
        #expect(switches.indices.filter { switches[$0] } == [40])
    }

    /// Encoders that count time in whole frames (x264) hand back a camera's microsecond times
    /// rounded: the keyframe is still the one that was asked for.
    @Test func keyframesAreKnownByTheirTokenNotByTime() {
        var boundaries = SegmentBoundaries(policy: SegmentPolicy(duration: 1))
        let fed = (0..<40).map { MediaTime(value: Int64($0) * 33_333 + 4_000, timescale: 1_000_000) }
        let marked = fed.indices.map { boundaries.startsSegment(FrameToken(UInt64($0)), at: fed[$0]) }
        #expect(marked.indices.filter { marked[$0] } == [30])
        // Out on the frame grid, 4 ms earlier than each went in.
        let switches = (0..<40).map { n in
            boundaries.switchesFile(before: EncodedFrame(data: [], pts: Self.time(n), dts: Self.time(n),
                                                         isKeyFrame: n == 0 || n == 30, token: FrameToken(UInt64(n))))
        }
        #expect(switches.indices.filter { switches[$0] } == [30])
    }
}
