/// Frames per second as an exact fraction (30000/1001 for "29.97").
public struct FrameRate: Hashable, Sendable, CustomStringConvertible {
    public let numerator: Int
    public let denominator: Int

    public init?(numerator: Int, denominator: Int) {
        guard numerator > 0, denominator > 0, numerator <= 1_000_000, denominator <= 1_000_000 else {
            return nil
        }
        let g = FrameRate.gcd(numerator, denominator)
        self.numerator = numerator / g
        self.denominator = denominator / g
    }

    /// Accepts `30`, `30/1`, `30000/1001`, `30:1` and the NTSC decimals `23.976`, `29.97`,
    /// `59.94` (read as n×1000/1001, which is what cameras mean by them).
    public init?(parsing text: String) {
        let t = text.trimmingCharacters(in: .whitespaces)
        if let sep = t.firstIndex(where: { $0 == "/" || $0 == ":" }) {
            guard let n = Int(t[..<sep]), let d = Int(t[t.index(after: sep)...]) else { return nil }
            self.init(numerator: n, denominator: d)
            return
        }
        if let n = Int(t) {
            self.init(numerator: n, denominator: 1)
            return
        }
        guard let value = Double(t), value > 0, value.isFinite else { return nil }
        let ntsc = (value * 1001 / 1000).rounded()
        if abs(ntsc * 1000 / 1001 - value) < 0.0051 {
            self.init(numerator: Int(ntsc) * 1000, denominator: 1001)
        } else {
            self.init(numerator: Int((value * 1000).rounded()), denominator: 1000)
        }
    }

    public var framesPerSecond: Double { Double(numerator) / Double(denominator) }

    /// The duration of one frame.
    public var frameDuration: MediaTime {
        MediaTime(value: Int64(denominator), timescale: Int32(numerator))
    }

    public var description: String {
        denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)"
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}

import Foundation
