import Testing
import VTCore

@Suite struct MediaTimeTests {
    @Test func comparesAcrossTimescales() {
        #expect(MediaTime(value: 1001, timescale: 30000) == MediaTime(value: 1001 * 3, timescale: 90000))
        #expect(MediaTime(value: 1, timescale: 30) < MediaTime(value: 1, timescale: 25))
        #expect(MediaTime(value: -1, timescale: 1000) < MediaTime.zero)
    }

    @Test func convertsWithRounding() {
        #expect(MediaTime(value: 1, timescale: 3).converted(to: 1000).value == 333)
        #expect(MediaTime(value: 2, timescale: 3).converted(to: 1000).value == 667)
        #expect(MediaTime(value: -2, timescale: 3).converted(to: 1000).value == -667)
    }

    @Test func addsExactlyInOneTimescale() {
        let frame = FrameRate(numerator: 30000, denominator: 1001)!.frameDuration
        var t = MediaTime.zero
        for _ in 0..<30000 { t = t + frame }
        #expect(t == MediaTime(value: 1001, timescale: 1))
    }

    @Test func hashAgreesWithEquality() {
        #expect(MediaTime(value: 2, timescale: 4).hashValue == MediaTime(value: 1, timescale: 2).hashValue)
    }
}

@Suite struct FrameRateTests {
    @Test(arguments: [("30", 30, 1), ("30/1", 30, 1), ("30000/1001", 30000, 1001), ("29.97", 30000, 1001),
                      ("23.976", 24000, 1001), ("59.94", 60000, 1001), ("25:1", 25, 1), ("12.5", 25, 2),
                      ("60/2", 30, 1)])
    func parses(_ text: String, _ numerator: Int, _ denominator: Int) throws {
        let rate = try #require(FrameRate(parsing: text))
        #expect(rate.numerator == numerator && rate.denominator == denominator)
    }

    @Test(arguments: ["", "0", "-30", "abc", "30/0", "1/2/3", "nan", "inf"])
    func refuses(_ text: String) {
        #expect(FrameRate(parsing: text) == nil)
    }
}

@Suite struct UnitTests {
    @Test(arguments: [("2M", 2_000_000), ("500k", 500_000), ("1.5G", 1_500_000_000), ("8000", 8000),
                      ("2.5M", 2_500_000), ("1K", 1000)] as [(String, Int64)])
    func decimalQuantities(_ text: String, _ value: Int64) {
        #expect(parseDecimalQuantity(text) == value)
    }

    @Test(arguments: ["", "M", "-1M", "2X", "two", "1e30"])
    func badQuantities(_ text: String) {
        #expect(parseDecimalQuantity(text) == nil)
    }

    @Test(arguments: [("10s", 10.0), ("1.5s", 1.5), ("500ms", 0.5), ("2m", 120), ("1h", 3600), ("1m30s", 90),
                      ("90", 90)])
    func durations(_ text: String, _ seconds: Double) {
        #expect(parseDuration(text) == seconds)
    }

    @Test(arguments: ["", "s", "10x", "ten", "10s5", "-3s"])
    func badDurations(_ text: String) {
        #expect(parseDuration(text) == nil)
    }

    @Test func formatsQuantities() {
        #expect(formatDecimalQuantity(2_000_000) == "2M")
        #expect(formatDecimalQuantity(1_500) == "1.5k")
        #expect(formatDecimalQuantity(999) == "999")
    }
}

@Suite struct FrameRateApproximationTests {
    @Test func ratesThatFitAreKept() {
        let ntsc = FrameRate(numerator: 30000, denominator: 1001)!
        #expect(ntsc.approximated(limit: 65535) == ntsc)
    }

    @Test(arguments: [(1_000_000, 33333), (999_999, 1_000_000), (120_000, 1001), (1_000_000, 1)])
    func wideFractionsBecomeTheClosestThatFits(_ numerator: Int, _ denominator: Int) throws {
        let rate = try #require(FrameRate(numerator: numerator, denominator: denominator))
        let near = rate.approximated(limit: 65535)
        #expect(near.numerator <= 65535 && near.denominator <= 65535)
        // No fraction with terms that fit is closer (brute force over every denominator).
        let best = (1...65535).map { d -> Double in
            let n = max(1, min(65535, Int((rate.framesPerSecond * Double(d)).rounded())))
            return abs(Double(n) / Double(d) - rate.framesPerSecond)
        }.min()!
        #expect(abs(near.framesPerSecond - rate.framesPerSecond) <= best * (1 + 1e-12))
    }
}
