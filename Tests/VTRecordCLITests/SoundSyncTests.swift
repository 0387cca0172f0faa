import Testing

/// How SoundSync times a beep against its flash, on made-up measurements: a whole beep by its
/// start, a beep a gap cut by the edge the gap left, and a late beep found late either way.
@Suite struct SoundSyncTests {
    static func sync(onsets: [Double], silences: [Double]) -> SoundSync {
        SoundSync(flashes: [1, 2], onsets: onsets, silences: silences, videoEnd: 3, audioEnd: 3)
    }

    @Test func aWholeBeepIsTimedByItsStart() {
        let offsets = Self.sync(onsets: [1.005, 2.03], silences: [1.105, 2.13]).offsets()
        #expect(offsets.map { ($0 ?? 9) * 1000 }.map { $0.rounded() } == [5, 30])
    }

    /// The device came back 80 ms into the second beep: its end is where it belongs.
    @Test func aBeepCutAtItsStartIsTimedByItsEnd() {
        let offsets = Self.sync(onsets: [1.0, 2.08], silences: [1.1, 2.1]).offsets()
        #expect(abs(offsets[1] ?? 9) < 0.001, "\(offsets)")
    }

    /// The device went away 40 ms into the second beep: its start is where it belongs.
    @Test func aBeepCutAtItsEndIsTimedByItsStart() {
        let offsets = Self.sync(onsets: [1.0, 2.0], silences: [1.1, 2.04]).offsets()
        #expect(abs(offsets[1] ?? 9) < 0.001, "\(offsets)")
    }

    /// A beep 50 ms late whose start a gap cut: still 50 ms late by its end.
    @Test func aCutBeepThatIsLateIsLate() {
        let offsets = Self.sync(onsets: [1.0, 2.1], silences: [1.1, 2.15]).offsets()
        #expect(abs((offsets[1] ?? 0) - 0.05) < 0.001, "\(offsets)")
    }
}
