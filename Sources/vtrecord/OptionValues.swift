import ArgumentParser
import VTCore
import VTEncoding

/// `--size 1280x720`.
struct FrameSize: ExpressibleByArgument, Equatable, CustomStringConvertible {
    let width: Int
    let height: Int

    init?(argument: String) {
        let parts = argument.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]),
              (16...16384).contains(w), (16...16384).contains(h) else { return nil }
        width = w
        height = h
    }

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    var description: String { "\(width)x\(height)" }
    static var defaultValueDescription: String { "1280x720" }
}

/// `--fps 30`, `--fps 30000/1001`, `--fps 29.97`.
struct FrameRateArgument: ExpressibleByArgument {
    let rate: FrameRate
    init?(argument: String) {
        guard let rate = FrameRate(parsing: argument) else { return nil }
        self.rate = rate
    }
}

/// A positive count with an optional decimal suffix: rates in bit/s (`2M`, `500k`) and sizes
/// in bytes (`250k`).
struct DecimalQuantity: ExpressibleByArgument {
    let value: Int64
    init?(argument: String) {
        guard let value = parseDecimalQuantity(argument), value > 0 else { return nil }
        self.value = value
    }
}

/// `--duration 10s`, `1m30s`, `500ms`, `90` (seconds).
struct DurationArgument: ExpressibleByArgument {
    let seconds: Double
    init?(argument: String) {
        guard let value = parseDuration(argument), value > 0 else { return nil }
        seconds = value
    }
}

/// `--keyint 60` (frames) or `--keyint 2s` (a duration: frames = seconds × fps).
struct KeyIntervalArgument: ExpressibleByArgument {
    let interval: EncoderSettings.KeyFrameInterval
    init?(argument: String) {
        if let frames = Int(argument) {
            guard frames > 0 else { return nil }
            interval = .frames(frames)
        } else if argument.last?.isLetter == true, let seconds = parseDuration(argument), seconds > 0 {
            interval = .seconds(seconds)
        } else {
            return nil
        }
    }
}

/// `--level 3.1`, `--level 4`, `--level auto`.
struct LevelArgument: ExpressibleByArgument {
    let level: String?
    init?(argument: String) {
        if argument == "auto" {
            level = nil
        } else if EncoderSettings.levelIDC(argument) != nil {
            level = argument
        } else {
            return nil
        }
    }
}

extension EncoderSettings.Profile: ExpressibleByArgument {}
extension EncoderSettings.Entropy: ExpressibleByArgument {}
extension EncoderSettings.RateControl: ExpressibleByArgument {}
