/** The dashboard's entry point: its styles (uPlot's beside ours, one CSS file), the router and the app. */
import 'uplot/dist/uPlot.min.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app.tsx';
import { startRouter } from './router.ts';

startRouter();
render(<App />, document.getElementById('app')!);
