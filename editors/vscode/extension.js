// Starts `collc lsp` for .coll files and offers the bounded check as a command.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('collc').get('path', 'collc');
  const server = { command, args: ['lsp'] };
  client = new LanguageClient(
    'collc',
    'collc',
    { run: server, debug: server },
    { documentSelector: [{ language: 'coll' }] },
  );
  context.subscriptions.push(
    vscode.commands.registerCommand('collc.checkFile', async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.document.languageId !== 'coll') {
        return;
      }
      // `collc.check` runs the symbolic and bounded obligations with progress
      // and cancellation; its findings arrive as diagnostics.
      const result = await vscode.commands.executeCommand(
        'collc.check',
        editor.document.uri.toString(),
      );
      if (result && result.verdict) {
        vscode.window.showInformationMessage(`collc check: ${result.verdict}`);
      }
    }),
  );
  client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
