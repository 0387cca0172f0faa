import Prometheus
import Synchronization

extension LiveMetric {
    /// The name as swift-prometheus builds it: the part before the last '_' and the unit after
    /// it (`vtrecord_bytes_written` + `total`), which it joins again with '_'.
    var descriptor: MetricNameDescriptor {
        let cut = name.lastIndex(of: "_") ?? name.endIndex
        let unit = cut == name.endIndex ? "" : String(name[name.index(after: cut)...])
        return MetricNameDescriptor(metricName: String(name[..<cut]), unitName: unit, helpText: help)
    }
}

/// The Prometheus text exposition of the recording's figures, through swift-prometheus: each
/// scrape reads the figures once and brings the registry's counters and gauges to them.
final class LiveMetrics: Sendable {
    private enum Instrument {
        case counter(Counter, last: Double)
        case gauge(Gauge)
    }

    private struct State: Sendable {
        var instruments: [String: Instrument] = [:]
    }

    private let registry = PrometheusCollectorRegistry()
    private let state = Mutex(State())

    /// The text for one scrape of `metrics`.
    func exposition(_ metrics: [LiveMetric]) -> [UInt8] {
        state.withLock { state in
            for metric in metrics {
                let key = metric.name + "{" + metric.labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
                switch state.instruments[key] {
                case .counter(let counter, let last):
                    // Counters only go up: a figure that went down (it cannot) is left where it was.
                    if metric.value > last {
                        counter.increment(by: metric.value - last)
                        state.instruments[key] = .counter(counter, last: metric.value)
                    }
                case .gauge(let gauge):
                    gauge.set(metric.value)
                case nil:
                    switch metric.kind {
                    case .counter:
                        let counter = registry.makeCounter(descriptor: metric.descriptor, labels: metric.labels)
                        counter.increment(by: metric.value)
                        state.instruments[key] = .counter(counter, last: metric.value)
                    case .gauge:
                        let gauge = registry.makeGauge(descriptor: metric.descriptor, labels: metric.labels)
                        gauge.set(metric.value)
                        state.instruments[key] = .gauge(gauge)
                    }
                }
            }
            var text: [UInt8] = []
            registry.emit(into: &text)
            return text
        }
    }
}
