// Charts of the dashboard, drawn with TradingView's lightweight-charts (canvas, made for financial
// series): candles with the synthetic price over them and the premium in a pane below, and the
// daily usage histogram. Times are UTC seconds, as the API's timestamps.
import {
  CandlestickSeries,
  createChart,
  HistogramSeries,
  LineSeries,
  type DeepPartial,
  type ChartOptions,
  type IChartApi,
  type ISeriesApi,
  type UTCTimestamp,
} from 'lightweight-charts';
import { priceFormat } from './format.js';

export interface Candle {
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
  verification: { status: string; synthetic_price?: number | null; divergence_pct?: number | null };
}

const BASE: DeepPartial<ChartOptions> = {
  autoSize: true,
  layout: { background: { color: '#ffffff' }, textColor: '#17201c', fontFamily: 'system-ui, sans-serif', attributionLogo: false },
  grid: { vertLines: { color: '#eef0ee' }, horzLines: { color: '#eef0ee' } },
  timeScale: { timeVisible: true, secondsVisible: false },
};

const seconds = (iso: string) => Math.floor(new Date(iso).getTime() / 1000) as UTCTimestamp;

export class CandleChart {
  private readonly chart: IChartApi;
  private readonly candles;
  private readonly synthetic;
  /** In a pane of its own, only while there is a premium to show (Builder and up). */
  private premium: ISeriesApi<'Histogram'> | null = null;

  constructor(container: HTMLElement) {
    this.chart = createChart(container, BASE);
    this.candles = this.chart.addSeries(CandlestickSeries, { upColor: '#0a6b3b', downColor: '#a4262c', borderVisible: false, wickUpColor: '#0a6b3b', wickDownColor: '#a4262c' });
    this.synthetic = this.chart.addSeries(LineSeries, { color: '#1a57c2', lineWidth: 2, title: 'synthetic', priceLineVisible: false, lastValueVisible: true });
  }

  /** Draws candles; the synthetic price and premium where the tier gives them (else hidden). */
  show(data: readonly Candle[]): { withSynthetic: boolean } {
    const format = priceFormat(data.at(-1)?.close ?? 0);
    this.candles.applyOptions({ priceFormat: format });
    this.synthetic.applyOptions({ priceFormat: format });
    this.candles.setData(data.map((c) => ({ time: seconds(c.time), open: c.open, high: c.high, low: c.low, close: c.close })));
    const synthetic = data.filter((c) => typeof c.verification.synthetic_price === 'number');
    const premium = data.filter((c) => typeof c.verification.divergence_pct === 'number');
    this.synthetic.setData(synthetic.map((c) => ({ time: seconds(c.time), value: c.verification.synthetic_price! })));
    if (premium.length) {
      this.premium ??= this.chart.addSeries(HistogramSeries, { color: '#8a5a00', title: 'premium %', priceFormat: { type: 'price', precision: 2, minMove: 0.01 } }, 1);
      this.premium.setData(premium.map((c) => ({ time: seconds(c.time), value: c.verification.divergence_pct!, color: c.verification.divergence_pct! >= 0 ? '#8a5a00' : '#1a57c2' })));
      this.chart.panes()[1]?.setHeight(90);
    } else if (this.premium) {
      this.chart.removeSeries(this.premium);
      this.premium = null;
    }
    this.chart.timeScale().fitContent();
    return { withSynthetic: synthetic.length > 0 };
  }

  /** Moves the last candle's close to a live rate (between refreshes of the page's candles). */
  live(rate: number): void {
    const last = this.candles.data().at(-1) as { time: UTCTimestamp; open: number; high: number; low: number; close: number } | undefined;
    if (!last) return;
    this.candles.update({ ...last, close: rate, high: Math.max(last.high, rate), low: Math.min(last.low, rate) });
  }
}

export class UsageChart {
  private readonly series;
  private readonly chart: IChartApi;

  constructor(container: HTMLElement) {
    this.chart = createChart(container, { ...BASE, timeScale: { timeVisible: false }, handleScroll: false, handleScale: false });
    this.series = this.chart.addSeries(HistogramSeries, {
      color: '#0b5d4b',
      priceFormat: { type: 'volume' },
      // requests are never negative: the scale starts at 0, also on a month with no request yet
      autoscaleInfoProvider: (base: () => { priceRange: { minValue: number; maxValue: number } } | null) => ({
        priceRange: { minValue: 0, maxValue: Math.max(1, base()?.priceRange.maxValue ?? 1) },
      }),
    });
  }

  show(days: readonly { date: string; requests: number }[]): void {
    this.series.setData(days.map((d) => ({ time: d.date, value: d.requests })));
    this.chart.timeScale().fitContent();
  }
}

/** The daily fixings of one pair: the fixing on its home clock and the UTC one, a line each. */
export class FixingChart {
  private readonly chart: IChartApi;
  private readonly local;
  private readonly utc;

  constructor(container: HTMLElement) {
    this.chart = createChart(container, BASE);
    this.local = this.chart.addSeries(LineSeries, { color: '#0b5d4b', lineWidth: 2, title: 'local', pointMarkersVisible: true });
    this.utc = this.chart.addSeries(LineSeries, { color: '#8a5a00', lineWidth: 2, title: 'UTC', pointMarkersVisible: true });
  }

  /** `name`: a fixing's title, its time on its own clock ("16:00 Lagos"). */
  show<F extends { kind: 'local' | 'utc'; time: string; rate: number | null }>(fixings: readonly F[], name: (f: F) => string): void {
    const format = priceFormat([...fixings].reverse().find((f) => f.rate !== null)?.rate ?? 0);
    for (const [series, kind] of [[this.local, 'local'], [this.utc, 'utc']] as const) {
      const one = fixings.find((f) => f.kind === kind);
      series.applyOptions(one ? { priceFormat: format, title: name(one) } : { priceFormat: format });
      series.setData(fixings.filter((f) => f.kind === kind && f.rate !== null).map((f) => ({ time: seconds(f.time), value: f.rate! })));
    }
    this.chart.timeScale().fitContent();
  }
}
