/** The chat webview's entry point: starts the chat app on the page VS Code gives it. */
import { startChat, type VsCodeApi } from "./chatApp";

declare function acquireVsCodeApi(): VsCodeApi;

startChat(document, window, acquireVsCodeApi());
