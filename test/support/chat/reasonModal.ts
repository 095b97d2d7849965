/**
 * A workspace-chat modal that asks for a reason, as an approval's "reject" opens it: one text input
 * (action `reason`) in block `blockId`, then any `extraBlocks`.
 */
export function reasonModal(options: {
  callbackId: string;
  title: string;
  submit: string;
  privateMetadata?: string;
  blockId?: string;
  multiline?: boolean;
  extraBlocks?: object[];
}) {
  return {
    type: "modal",
    callback_id: options.callbackId,
    ...(options.privateMetadata === undefined ? {} : { private_metadata: options.privateMetadata }),
    title: { type: "plain_text", text: options.title },
    submit: { type: "plain_text", text: options.submit },
    blocks: [
      {
        type: "input",
        block_id: options.blockId ?? "b",
        label: { type: "plain_text", text: "Reason" },
        element: {
          type: "plain_text_input",
          action_id: "reason",
          ...(options.multiline ? { multiline: true } : {}),
        },
      },
      ...(options.extraBlocks ?? []),
    ],
  };
}
