/// When the test pattern flashes and the test sound beeps with it: once a second, on the first
/// frame at or after each whole second of the recording's timeline.
///
/// Both come from this one schedule, so a flash and its beep start at the same instant (the
/// flash frame's presentation time), whatever the frame rate (30000/1001 included): anyone
/// can check a recording's sync by eye and ear, and the tests by measuring it.
public struct FlashSchedule: Sendable, Equatable {
    public let frameRate: FrameRate
    /// How long each beep sounds.
    public static let beepDuration = 0.1
    /// The beep's pitch, in hertz.
    public static let beepFrequency = 1000.0

    public init(frameRate: FrameRate) {
        self.frameRate = frameRate
    }

    /// Whether frame `n` (counting from 0 at time 0) is a flash: a whole second k falls in
    /// ((n − 1) / rate, n / rate].
    public func isFlash(frame n: Int) -> Bool {
        let num = frameRate.numerator, den = frameRate.denominator
        return Self.floorDivide(n * den, num) > Self.floorDivide((n - 1) * den, num)
    }

    /// The presentation time of the flash frame of second `k` (the first frame at or after k
    /// seconds), when its beep starts.
    public func flashTime(second k: Int) -> MediaTime {
        let num = frameRate.numerator, den = frameRate.denominator
        let frame = (k * num + den - 1) / den
        return MediaTime(value: Int64(frame * den), timescale: Int32(num))
    }

    private static func floorDivide(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}
