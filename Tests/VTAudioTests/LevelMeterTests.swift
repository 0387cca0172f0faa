import Foundation
import Testing
@testable import VTAudio

/// The status's sound level: the loudest sample of each half second, in dBFS.
struct LevelMeterTests {
    static func chunk(_ samples: [Int16]) -> AudioChunk {
        AudioChunk(data: samples.withUnsafeBytes { Array($0) }, frames: samples.count, time: nil)
    }

    @Test func aQuarterOfFullScaleIsTwelveDecibelsDown() {
        var meter = LevelMeter(sampleRate: 100)
        #expect(meter.levelDBFS == nil)
        meter.take(Self.chunk([0, 8192, -8192, 100] + Array(repeating: 0, count: 46)), format: .s16)
        #expect(abs(meter.levelDBFS! - -12.04) < 0.01)
    }

    @Test func theLevelFollowsTheLatestHalfSecond() {
        var meter = LevelMeter(sampleRate: 100)
        meter.take(Self.chunk([-32768] + Array(repeating: 0, count: 49)), format: .s16)
        #expect(abs(meter.levelDBFS!) < 0.01)
        // A quiet half second replaces the loud one.
        meter.take(Self.chunk(Array(repeating: 0, count: 50)), format: .s16)
        #expect(meter.levelDBFS == -100)
    }

    @Test func floatAndThirtyTwoBitSamples() {
        var meter = LevelMeter(sampleRate: 4)
        let floats: [Float] = [0.5, -0.25]
        meter.take(AudioChunk(data: floats.withUnsafeBytes { Array($0) }, frames: 2, time: nil), format: .float32)
        #expect(abs(meter.levelDBFS! - -6.02) < 0.01)
        var wide = LevelMeter(sampleRate: 4)
        let ints: [Int32] = [Int32.min / 10, 0]
        wide.take(AudioChunk(data: ints.withUnsafeBytes { Array($0) }, frames: 2, time: nil), format: .s32)
        #expect(abs(wide.levelDBFS! - -20) < 0.01)
    }
}
